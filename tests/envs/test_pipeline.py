"""kutnahora-train pipeline: one command runs PPO, expert iteration from its network, PPO again from the
guide and a first match, in one run folder; stopped in a stage, ``--resume`` goes on from that stage
without redoing the ones done; it writes nothing outside its folder and refuses a folder that holds
something."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from kutnahora.envs import train
from kutnahora.envs.pipeline import (
    OPTIONS,
    POLISH_EVALUATIONS,
    POLISH_LEAGUE,
    PPO_EVALUATIONS,
    RESERVE_MINUTES,
    best_policy_iteration,
    distill_minutes,
    match_arguments,
    polish_minutes,
    recover_unrecorded,
    stage_arguments,
)
from kutnahora.learned import network

torch = pytest.importorskip("torch")


def test_the_pipeline_stopped_in_a_stage_goes_on_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shipped = {p: p.read_bytes() for p in (network.WEIGHTS, network.GUIDE)}
    real_main = train.main
    called: list[str] = []
    stops = [True]

    def stopped_in_distill(argv: Sequence[str]) -> int:
        called.append(argv[0])
        if argv[0] == "distill" and stops:
            stops.clear()
            on_disk = json.loads((run / "pipeline.json").read_text())["stages"]["distill"]["commands"]
            assert on_disk and on_disk[-1].startswith("kutnahora-train distill"), "recorded as it starts"
            time.sleep(0.3)
            raise KeyboardInterrupt  # a Ctrl-C in the second stage, 0.3 s into it, once
        return real_main(argv)

    monkeypatch.setattr(train, "main", stopped_in_distill)
    command = ["pipeline", "--smoke", "--no-progress", "--run", str(run), "--seed", "2"]
    assert real_main(command) == 130
    said = f"stopped; {run} keeps the stages done and the one under way's last checkpoint, --resume goes on"
    assert said in capsys.readouterr().err
    record = json.loads((run / "pipeline.json").read_text())
    assert record["stages"]["ppo"]["done"] and not record["stages"]["distill"]["done"]
    assert record["stages"]["distill"]["seconds"] >= 0.3, "the time of a stage stopped is counted"
    assert all("running_since" not in stage for stage in record["stages"].values()), "a recorded stop"
    assert (run / "start.npz").exists() and not (run / "guide.npz").exists()
    assert not (run / "neural.npz").exists(), "the policy comes from the polish stage, not the first PPO"

    called.clear()
    assert real_main(["pipeline", "--run", str(run), "--resume", "--no-progress"]) == 0
    assert called == ["distill", "export", "run", "export"], "PPO, done, is not run again"
    out = capsys.readouterr().out
    assert "stage 1/4, ppo: done" in out and "to play them as the shipped networks" in out
    record = json.loads((run / "pipeline.json").read_text())
    assert all(stage["done"] for stage in record["stages"].values())
    assert record["options"]["seed"] == 2 and len(record["commands"]) == 2
    assert record["seconds"] == pytest.approx(sum(s["seconds"] for s in record["stages"].values()), abs=0.2)
    distilled = record["stages"]["distill"]["commands"]
    assert sum(c.startswith("kutnahora-train distill") for c in distilled) == 2
    assert f"--init {run / 'start.npz'}" in distilled[0], "expert iteration starts from the PPO network"
    polish = record["stages"]["polish"]
    assert f"--init {run / 'guide.npz'}" in polish["commands"][0], "the policy is PPO from the guide"
    assert " ".join(POLISH_LEAGUE) in polish["commands"][0]
    assert polish["commands"][-1].endswith(f"--iteration {polish['chosen_iteration']}"), "the best evaluated"
    assert network.load(run / "neural.npz").meta["iteration"] == polish["chosen_iteration"]
    assert f"export {run / 'polish'} --iteration {polish['chosen_iteration']} --to" in out

    # Both networks load as the bots read them; the guide records the command that made it.
    for name in ("start.npz", "neural.npz", "guide.npz"):
        net = network.load(run / name)
        assert net.actions > 0 and net.meta["samples"] > 0
    assert json.loads((run / "guide.json").read_text())["trained_by"][0].startswith("kutnahora-train distill")
    # The first match played the new networks: the guided search against the search bot, and the policy
    # alone against greedy, two players.
    match = json.loads((run / "match.json").read_text())
    assert match["options"]["guide"] == str(run / "guide.npz") and match["by_players"]["2"]["games"] == 2
    policy = json.loads((run / "policy.json").read_text())
    assert policy["options"]["weights"] == str(run / "neural.npz") and policy["bots"] == ["neural", "greedy"]
    assert {p: p.read_bytes() for p in shipped} == shipped, "the shipped networks are not touched"


def test_a_killed_stage_is_counted_to_the_last_file_it_wrote(tmp_path: Path) -> None:
    """SIGKILL or a crash records no seconds; the stage's start, on disk while it runs, and the newest file
    in the run folder bound the time it spent, which --resume counts (and says it did)."""
    started = time.time() - 1000
    record = {
        "stages": {
            "ppo": {"done": True, "seconds": 300.0, "commands": []},
            "distill": {"done": False, "seconds": 2000.0, "commands": [], "running_since": started},
            "polish": {"done": False, "seconds": 0.0, "commands": []},
            "match": {"done": False, "seconds": 0.0, "commands": []},
        }
    }
    (tmp_path / "distill" / "data").mkdir(parents=True)
    for name, age in (("distill/checkpoint.pt", 400), ("distill/data/game-1.npz", 250), ("start.npz", 2000)):
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (started + 1000 - age, started + 1000 - age))
    (tmp_path / "pipeline.json").write_text("{}")  # written now by the pipeline itself: not a sign of work
    said = recover_unrecorded(record, tmp_path)
    distill = record["stages"]["distill"]
    assert distill["seconds"] == pytest.approx(2000 + 750, abs=0.2), "counted to the newest game, not now"
    assert distill["unrecorded_seconds"] == pytest.approx(750, abs=0.2) and "running_since" not in distill
    assert record["stages"]["ppo"]["seconds"] == 300.0 and "unrecorded_seconds" not in record["stages"]["ppo"]
    assert said == [
        "stage distill's last invocation ended without recording its time (killed?): counting 750 s, "
        "from its start to the last file it wrote"
    ]
    assert recover_unrecorded(record, tmp_path) == [] and distill["seconds"] == pytest.approx(2750, abs=0.2)


def test_the_pipeline_refuses_what_it_cannot_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "kept.txt").write_text("a file of somebody's")
    assert train.main(["pipeline", "--smoke", "--run", str(tmp_path)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert train.main(["pipeline", "--run", str(tmp_path / "new"), "--resume"]) == 2
    assert "no pipeline.json to resume from" in capsys.readouterr().err
    assert train.main(["pipeline", "--run", str(tmp_path / "new"), "--learner-games", "2"]) == 2
    assert "--learner-games is a share" in capsys.readouterr().err
    assert train.main(["pipeline", "--run", str(tmp_path / "new"), "--polish-minutes", "0"]) == 2
    assert "--polish-minutes must be at least 1" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    # A run made by the pipeline of three stages (ppo, distill, match) is not resumed by this one.
    old = tmp_path / "old"
    old.mkdir()
    stages = {name: {"done": True, "seconds": 1.0, "commands": []} for name in ("ppo", "distill", "match")}
    (old / "pipeline.json").write_text(json.dumps({"options": {}, "stages": stages}))
    assert train.main(["pipeline", "--run", str(old), "--resume"]) == 2
    said = "made by a pipeline of other stages (ppo, distill, match); start a new run"
    assert said in capsys.readouterr().err
    assert sorted(p.name for p in old.iterdir()) == ["pipeline.json"]


def test_the_full_run_budgets_expert_iteration_by_the_hours_left(tmp_path: Path) -> None:
    """Unlike the smoke, the full run searches with the search bot for the rounds asked, evaluates once at
    the end, and gives expert iteration what ``--hours`` leaves after the stages before, the polish
    stage's minutes and the reserve; the polish stage plays PPO from the guide against its league."""
    config = {key: None for key in OPTIONS} | {
        "ppo_samples": 115_000,
        "distill_iterations": 29,
        "polish_minutes": 60.0,
        "searcher": "mcts:100",
        "learner_games": 0.5,
        "workers": 2,
        "match_bots": "neural-mcts:110,mcts:100",
        "match_games": 20,
        "policy_games": 40,
        "hours": 3.0,
        "seed": 1,
        "smoke": False,
    }
    stages = stage_arguments(config, tmp_path, progress=False)
    assert stages["ppo"][-8:] == ["--samples", "115000", *PPO_EVALUATIONS]
    assert " ".join(PPO_EVALUATIONS) == "--eval-every 1000 --eval-games 40 --eval-search-games 0"
    polish = " ".join(stages["polish"])
    assert polish.startswith(f"run --run {tmp_path / 'polish'} --init {tmp_path / 'guide.npz'} --seed 1")
    assert polish.endswith(" ".join([*POLISH_LEAGUE, "--samples", "5000000", *POLISH_EVALUATIONS]))
    assert " ".join(POLISH_EVALUATIONS) == "--eval-every 6 --eval-games 100 --eval-search-games 0"
    assert "--players 2=4,3=1,4=5 --opponents greedy=6,self=2,past=2,mcts:10=0.5" in polish
    distill = " ".join(stages["distill"])
    for part in ("--searcher mcts:100", "--iterations 29", "--eval-every 29", "--learner-games 0.5"):
        assert part in distill
    match, policy = (" ".join(ladder) for ladder in match_arguments(config, tmp_path))
    assert (
        match.startswith("--bots neural-mcts:110,mcts:100 --players 2 --games 20 ")
        and "--games 40 " in policy
    )
    assert "--workers 2" in match and "--workers 2" in policy, "the match plays a game per worker at once"
    assert distill_minutes(config, 30 * 60) == 180 - 30 - 60 - RESERVE_MINUTES
    assert distill_minutes(config, 4 * 3600) == 1.0, "over budget, still one iteration"
    assert polish_minutes(config, 100 * 60) == 60, "its own minutes, when the stages before kept to theirs"
    assert polish_minutes(config, 150 * 60, 10 * 60) == 180 - 150 - RESERVE_MINUTES, "or what is left"
    assert polish_minutes(config, 110 * 60, 10 * 60) == 50, "resumed: what its earlier invocations left"
    assert polish_minutes(config, 4 * 3600) == 1.0


def test_distill_stops_after_its_minutes_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "distill"
    smoke = ["distill", "--smoke", "--no-progress", "--run", str(run), "--iterations", "3"]
    assert train.main([*smoke, "--minutes", "0.0001"]) == 0
    assert "stopped after 0.0001 minutes" in capsys.readouterr().out
    assert len(json.loads((run / "history.json").read_text())) == 1, "the iteration under way finished"
    assert train.main([*smoke, "--resume"]) == 0
    assert [h["iteration"] for h in json.loads((run / "history.json").read_text())] == [1, 2, 3]
    assert train.main([*smoke[:-2], "--minutes", "-1"]) == 2


def test_run_stops_after_its_minutes_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``kutnahora-train run --minutes``: the iteration under way finishes, the run evaluates, exports and
    checkpoints as at its end, and ``--resume`` goes on to its samples."""
    run = tmp_path / "ppo"
    smoke = ["run", "--smoke", "--no-progress", "--run", str(run), "--samples", "1536"]
    assert train.main([*smoke, "--minutes", "0.0001"]) == 0
    assert "stopped after 0.0001 minutes (--minutes)" in capsys.readouterr().out
    assert [h["iteration"] for h in json.loads((run / "history.json").read_text())] == [1]
    assert {e["iteration"] for e in json.loads((run / "evaluations.json").read_text())} == {1}
    assert (run / "weights" / "iter-00001.npz").exists()
    assert train.main([*smoke, "--resume"]) == 0
    assert [h["iteration"] for h in json.loads((run / "history.json").read_text())] == [1, 2, 3]
    assert train.main([*smoke[:-2], "--run", str(tmp_path / "other"), "--minutes", "-1"]) == 2
    assert "--minutes must be 0 (no limit) or more" in capsys.readouterr().err


def test_the_ppo_iteration_that_beat_greedy_most_is_chosen(tmp_path: Path) -> None:
    """A PPO policy's strength against greedy swings between iterations: the pipeline exports the one whose
    deterministic evaluations won most at two and four players together (the later of equals), of those
    evaluated at both whose network was kept."""

    def row(iteration: int, players: int, policy: str, wins: int) -> dict[str, object]:
        return {
            "iteration": iteration,
            "opponent": "greedy",
            "players": players,
            "policy": policy,
            "games": 100,
            "wins": wins,
            "win_rate": wins / 100,
        }

    assert best_policy_iteration(tmp_path) is None, "no evaluations"
    rows = [
        row(6, 2, "deterministic", 60),
        row(6, 4, "deterministic", 30),
        row(12, 2, "deterministic", 93),
        row(12, 4, "deterministic", 47),  # 140 of 200
        row(18, 2, "sampled", 99),  # the sampled policy: not what the bot plays
        row(18, 4, "sampled", 99),
        row(18, 2, "deterministic", 84),
        row(18, 4, "deterministic", 40),
        row(24, 2, "deterministic", 98),
        row(24, 4, "deterministic", 42),  # 140 of 200, as 12: the later
        row(30, 2, "deterministic", 99),  # evaluated at two players only
        row(36, 2, "deterministic", 99),
        row(36, 4, "deterministic", 60),  # its network was not kept
        {**row(42, 2, "deterministic", 99), "opponent": "mcts:25"},
        {**row(42, 4, "deterministic", 99), "opponent": "mcts:25"},
    ]
    (tmp_path / "evaluations.json").write_text(json.dumps(rows))
    (tmp_path / "weights").mkdir()
    assert best_policy_iteration(tmp_path) is None, "no network kept"
    for iteration in (6, 12, 18, 24, 30, 42):
        (tmp_path / "weights" / f"iter-{iteration:05d}.npz").write_bytes(b"")
    assert best_policy_iteration(tmp_path) == (24, 0.7)
    assert best_policy_iteration(tmp_path, players=(2,)) == (30, 0.99), "two players alone, if asked"
