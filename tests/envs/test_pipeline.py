"""kutnahora-train pipeline: one command runs PPO, expert iteration from its network and a first match, in
one run folder; stopped in a stage, ``--resume`` goes on from that stage without redoing the ones done; it
writes nothing outside its folder and refuses a folder that holds something."""

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
    PPO_EVALUATIONS,
    RESERVE_MINUTES,
    best_policy_iteration,
    distill_minutes,
    match_arguments,
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
    assert (run / "neural.npz").exists() and not (run / "guide.npz").exists()
    ppo = record["stages"]["ppo"]
    assert ppo["commands"][-1].endswith(f"--iteration {ppo['chosen_iteration']}"), "the best evaluated"
    assert network.load(run / "neural.npz").meta["iteration"] == ppo["chosen_iteration"]

    called.clear()
    assert real_main(["pipeline", "--run", str(run), "--resume", "--no-progress"]) == 0
    assert called == ["distill", "export"], "PPO, done, is not run again"
    out = capsys.readouterr().out
    assert "stage 1/3, ppo: done" in out and "to play them as the shipped networks" in out
    record = json.loads((run / "pipeline.json").read_text())
    assert all(stage["done"] for stage in record["stages"].values())
    assert record["options"]["seed"] == 2 and len(record["commands"]) == 2
    assert record["seconds"] == pytest.approx(sum(s["seconds"] for s in record["stages"].values()), abs=0.2)
    distilled = record["stages"]["distill"]["commands"]
    assert sum(c.startswith("kutnahora-train distill") for c in distilled) == 2
    assert f"--init {run / 'neural.npz'}" in distilled[0], "expert iteration starts from the PPO network"

    # Both networks load as the bots read them; the guide records the command that made it.
    for name in ("neural.npz", "guide.npz"):
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
            "match": {"done": False, "seconds": 0.0, "commands": []},
        }
    }
    (tmp_path / "distill" / "data").mkdir(parents=True)
    for name, age in (("distill/checkpoint.pt", 400), ("distill/data/game-1.npz", 250), ("neural.npz", 2000)):
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
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]


def test_the_full_run_budgets_expert_iteration_by_the_hours_left(tmp_path: Path) -> None:
    """Unlike the smoke, the full run searches with the search bot for the rounds asked, evaluates once at
    the end, and gives expert iteration what ``--hours`` leaves after the stages before and the reserve."""
    config = {key: None for key in OPTIONS} | {
        "ppo_samples": 115_000,
        "distill_iterations": 29,
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
    assert " ".join(PPO_EVALUATIONS) == "--eval-every 7 --eval-games 100 --eval-search-games 0"
    distill = " ".join(stages["distill"])
    for part in ("--searcher mcts:100", "--iterations 29", "--eval-every 29", "--learner-games 0.5"):
        assert part in distill
    match, policy = (" ".join(ladder) for ladder in match_arguments(config, tmp_path))
    assert (
        match.startswith("--bots neural-mcts:110,mcts:100 --players 2 --games 20 ")
        and "--games 40 " in policy
    )
    assert "--workers 2" in match and "--workers 2" in policy, "the match plays a game per worker at once"
    assert distill_minutes(config, 30 * 60) == 180 - 30 - RESERVE_MINUTES
    assert distill_minutes(config, 4 * 3600) == 1.0, "over budget, still one iteration"


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


def test_the_ppo_iteration_that_beat_greedy_most_is_chosen(tmp_path: Path) -> None:
    """A PPO policy's strength against greedy swings between iterations: the pipeline exports the one whose
    deterministic two-player evaluation won most (the later of equals), of those whose network was kept."""

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
        row(7, 2, "deterministic", 60),
        row(14, 2, "deterministic", 93),
        row(14, 4, "deterministic", 99),  # four players: not what is compared
        row(21, 2, "sampled", 97),  # the sampled policy: not what the bot plays
        row(21, 2, "deterministic", 84),
        row(28, 2, "deterministic", 93),  # as many as 14: the later
        row(35, 2, "deterministic", 98),  # its network was not kept
        {**row(42, 2, "deterministic", 99), "opponent": "mcts:25"},
    ]
    (tmp_path / "evaluations.json").write_text(json.dumps(rows))
    (tmp_path / "weights").mkdir()
    assert best_policy_iteration(tmp_path) is None, "no network kept"
    for iteration in (7, 14, 21, 28, 42):
        (tmp_path / "weights" / f"iter-{iteration:05d}.npz").write_bytes(b"")
    assert best_policy_iteration(tmp_path) == (28, 0.93)
