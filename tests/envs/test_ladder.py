"""The strength ladder's command: a stopped ladder goes on from its report without replaying a game and ends
with the report an unstopped one writes; a report of other options is refused, and so is overwriting one;
``--weights`` and ``--guide`` each replace only their own bots' network; ``--workers`` plays the same games
in worker processes, which end with the ladder."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kutnahora.clients.tournament.results import GameRecord
from kutnahora.envs import ladder
from tests.stopping import children_of, gone, terminate_when

LADDER = ["--bots", "random,greedy", "--players", "2,4", "--games", "6", "--games4", "0", "--seed", "3"]


def games(report: dict[str, Any]) -> list[tuple[int, int, list[str], list[int] | None, list[int]]]:
    """What a report says of each game: index, seed, seats, scores, winners."""
    return [
        (r["index"], r["seed"], r["bots"], r["scores"], r["winners"])
        for part in report["by_players"].values()
        for r in part["records"]
    ]


def test_a_stopped_ladder_goes_on_from_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = tmp_path / "whole.json"
    assert ladder.main([*LADDER, "--json", str(whole)]) == 0
    expected = json.loads(whole.read_text())

    played: list[int] = []
    real_play = ladder.play

    def play_then_stop(
        bots: list[str], seed: int, index: int, clock: ladder.Clock, networks: ladder.Networks
    ) -> GameRecord:
        if len(played) == 4:
            raise KeyboardInterrupt
        played.append(index)
        return real_play(bots, seed, index, clock, networks)

    stopped = tmp_path / "stopped.json"
    monkeypatch.setattr(ladder, "play", play_then_stop)
    assert ladder.main([*LADDER, "--json", str(stopped)]) == 130  # a Ctrl-C in the fifth game
    assert f"stopped with 4 games played, all in {stopped}; --resume goes on" in capsys.readouterr().err
    first = json.loads(stopped.read_text())
    assert len(first["by_players"]["2"]["records"]) == 4

    played.clear()
    monkeypatch.setattr(ladder, "play", lambda *a: (played.append(a[2]), real_play(*a))[1])
    assert ladder.main([*LADDER, "--json", str(stopped), "--resume"]) == 0
    assert played == [4, 5], "only the games the report did not hold were played"
    resumed = json.loads(stopped.read_text())
    assert games(resumed) == games(expected)
    assert resumed["by_players"]["2"]["head_to_head"] == expected["by_players"]["2"]["head_to_head"]
    decisions = [
        {bot: c["decisions"] for bot, c in r["by_players"]["2"]["clock"].items()} for r in (resumed, expected)
    ]
    assert decisions[0] == decisions[1], "the kept games' decisions are counted, and the new ones"
    assert resumed["date"] == first["date"] and len(resumed["resumed"]) == 1


def test_sigterm_stops_the_ladder_as_ctrl_c_does(tmp_path: Path) -> None:
    """A service manager's or ``kill``'s stop: the sentence and status of Ctrl-C, every finished game in the
    report, no traceback (SIGTERM's default ended the process where it stood, saying nothing)."""
    report = tmp_path / "ladder.json"
    command = [sys.executable, "-m", "kutnahora.envs.ladder", *LADDER[:4], "--games", "5000"]
    status, error = terminate_when([*command, "--json", str(report)], report.exists, within=60)
    assert status == 130, error
    assert "Traceback" not in error
    played = json.loads(report.read_text())["by_players"]["2"]["records"]
    assert played and f"stopped with {len(played):,} games played, all in {report}; --resume goes on" in error


def test_resume_refuses_another_ladders_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "ladder.json"
    assert ladder.main([*LADDER, "--json", str(report)]) == 0
    before = report.read_text()
    with pytest.raises(SystemExit) as refused:
        ladder.main([*LADDER[:-1], "4", "--json", str(report), "--resume"])
    assert refused.value.code == 2
    assert "was played with seed 3, not 4" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ladder.main([*LADDER, "--json", str(report)])
    assert "exists: --resume to go on from it" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ladder.main([*LADDER, "--json", str(tmp_path / "none.json"), "--resume"])
    assert "does not exist" in capsys.readouterr().err
    assert report.read_text() == before, "a refused run leaves the report as it was"


def test_weights_and_guide_each_replace_only_their_bots_network(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.npz")
    quick = ["--players", "2", "--games", "1"]
    # --weights is the policy bots' file: neural-mcts keeps the shipped guide and plays.
    assert ladder.main(["--bots", "neural-mcts:3,random", *quick, "--weights", missing]) == 0
    assert ladder.main(["--bots", "neural,random", *quick, "--guide", missing]) == 0
    for bots, option in (("neural-mcts:3,random", "--guide"), ("neural,random", "--weights")):
        with pytest.raises(SystemExit) as refused:
            ladder.main(["--bots", bots, *quick, option, missing])
        assert refused.value.code == 2
        assert "cannot play" in capsys.readouterr().err
    # Nothing of a run's options outlives it: the next game in the process plays the shipped networks.
    record = ladder.play(["neural", "random"], 5, 0, ladder.Clock())
    assert record.status == "finished"


def test_workers_play_the_same_games_as_one_process(tmp_path: Path) -> None:
    """Two worker processes: the same games (seeds, seats, scores, winners) in the same order, and the same
    decisions counted per bot, as one process; the neural bot reads the weights it is given there too."""
    quick = ["--bots", "random,greedy,neural", "--players", "2", "--games", "4", "--seed", "5"]
    alone, together = tmp_path / "alone.json", tmp_path / "together.json"
    assert ladder.main([*quick, "--json", str(alone)]) == 0
    assert ladder.main([*quick, "--workers", "2", "--json", str(together)]) == 0
    one, two = (json.loads(path.read_text()) for path in (alone, together))
    assert games(two) == games(one) and len(games(two)) == 12
    assert [r["index"] for r in two["by_players"]["2"]["records"]] == list(range(12))
    counted = [{b: c["decisions"] for b, c in r["by_players"]["2"]["clock"].items()} for r in (one, two)]
    assert counted[0] == counted[1] and counted[1]["neural"] > 0
    assert all(c["seconds"] > 0 for c in two["by_players"]["2"]["clock"].values()), "CPU measured in workers"
    with pytest.raises(SystemExit):
        ladder.main([*quick, "--workers", "0"])


def test_a_stopped_ladder_with_workers_keeps_its_games_in_order_and_leaves_no_worker(tmp_path: Path) -> None:
    report = tmp_path / "ladder.json"
    command = [sys.executable, "-m", "kutnahora.envs.ladder", *LADDER[:4], "--games", "5000"]
    process = subprocess.Popen(
        [*command, "--workers", "2", "--json", str(report)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not report.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert report.exists(), process.stderr.read() if process.poll() is not None else "no report in 60 s"
        workers = children_of(process.pid)
        assert len(workers) >= 2, workers
        process.send_signal(signal.SIGTERM)
        error = process.communicate(timeout=60)[1]
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130 and "Traceback" not in error, error
    records = json.loads(report.read_text())["by_players"]["2"]["records"]
    assert [r["index"] for r in records] == list(range(len(records))), "the games kept are every game to one"
    assert f"stopped with {len(records):,} games played, all in {report}; --resume goes on" in error
    assert all(gone(pid, within=5) for pid in workers), "a worker outlived the ladder"


def test_a_stop_ends_the_workers_games_at_once(tmp_path: Path) -> None:
    """SIGTERM while both workers are inside long games (mcts:400, about a minute each): the ladder ends
    within seconds, its workers with it (a pool's shutdown would have waited for the games to end)."""
    report = tmp_path / "ladder.json"
    command = [sys.executable, "-m", "kutnahora.envs.ladder", "--bots", "mcts:400,greedy"]
    process = subprocess.Popen(
        [*command, "--players", "2", "--games", "10", "--workers", "2", "--json", str(report)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(children_of(process.pid)) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        time.sleep(3)  # the workers have started their games
        workers = children_of(process.pid)
        assert len(workers) >= 2 and not report.exists(), (workers, report.exists())
        process.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        error = process.communicate(timeout=60)[1]
        waited = time.monotonic() - stopped
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130 and "stopped with 0 games played" in error, error
    assert waited < 10, f"the ladder took {waited:.1f} s to stop"
    assert all(gone(pid, within=5) for pid in workers), "a worker outlived the ladder"
