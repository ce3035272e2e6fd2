"""``kutnahora-hold`` runs end to end: it holds games with slow bots and prints the server's health."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kutnahora import engine
from kutnahora.bench import hold
from kutnahora.bench.replay_check import check_replay
from kutnahora.engine import GameOptions
from kutnahora.v1 import game_pb2, replay_service_pb2
from kutnahora.wire.games import game_options_to_wire, result_to_wire


def test_the_hold_plays_games_and_prints_a_line_every_interval() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.hold", "--games", "6", "--players", "2",
            "--connections", "2", "--think", "0-0.01", "--duration", "3", "--report-every", "1",
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    lines = re.findall(r"decisions/s +latency p50 +[\d.]+ ms p99 +[\d.]+ ms", done.stdout)
    assert len(lines) >= 3
    assert re.search(r"server 0 RSS \d+ MiB, \d+ fds", done.stdout)
    finished = re.search(
        r"(\d+) decisions; games finished (\d+), abandoned 0; 0 failed.*"
        r"games verified (\d+) \((\d+) confirmed decisions found in their replays\), mismatched 0",
        done.stdout,
    )
    assert finished is not None, done.stdout
    assert int(finished.group(1)) > 0 and int(finished.group(2)) >= 6  # every game played to its end
    assert finished.group(3) == finished.group(2)  # and every one's record checked against the engine
    assert 0 < int(finished.group(4)) <= int(finished.group(1))


def test_the_hold_spreads_its_bots_over_processes_and_probes_the_server(tmp_path: Path) -> None:
    """Two client processes hold the games; each line merges both and the probe's figures; every game that
    ended is verified; the collector trace and the server's metrics are written."""
    trace, metrics = tmp_path / "gc.json", tmp_path / "metrics.txt"
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.hold", "--games", "6", "--players", "2",
            "--connections", "2", "--think", "0-0.01", "--duration", "3", "--report-every", "1",
            "--client-processes", "2", "--probe-interval-ms", "20", "--server-gc-trace", str(trace),
            "--save-metrics", str(metrics),
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    lines = re.findall(r"decisions/s .*\(2 client processes\)  probe (\d+) calls p50 +[\d.]+  p99 +[\d.]+  "
                       r"p99\.9 +[\d.]+  max +[\d.]+ ms", done.stdout)  # fmt: skip
    assert len(lines) == 3, done.stdout
    assert sum(int(calls) for calls in lines) >= 3  # a call every 20 ms (fewer when the machine is loaded)
    finished = re.search(r"games finished (\d+), abandoned 0; 0 failed.*games verified (\d+) ", done.stdout)
    assert finished is not None and int(finished.group(1)) >= 6, done.stdout
    assert finished.group(2) == finished.group(1)  # both processes' games checked against the engine
    assert json.loads(trace.read_text())["generations"][0]["collections"] >= 0
    assert "kutnahora_decisions_applied_total" in metrics.read_text()


def test_the_hold_refuses_bad_settings() -> None:
    with pytest.raises(SystemExit, match="--think"):
        hold.parse_think("slow")
    with pytest.raises(SystemExit, match="PostgreSQL"):
        hold.main(["--replicas", "2"])
    with pytest.raises(SystemExit, match="--client-processes"):
        hold.main(["--games", "2", "--client-processes", "3"])
    with pytest.raises(SystemExit, match="--probe-interval-ms"):
        hold.main(["--probe-interval-ms", "-1"])


def test_a_childs_tally_adds_to_the_parents() -> None:
    parent, child = hold.Tally(decisions=5, verified=1), hold.Tally(decisions=7, verified=2, failed=1)
    child.games_refused["OVERLOADED"] += 4
    child.refusals["STALE_VERSION (FAILED_PRECONDITION)"] += 1
    child.errors.append("seat 0 of g1: gone")
    parent.add_json(json.loads(json.dumps(child.to_json())))
    assert (parent.decisions, parent.verified, parent.failed) == (12, 3, 1)
    assert parent.games_refused == {"OVERLOADED": 4} and parent.errors == ["seat 0 of g1: gone"]
    assert parent.refusals["STALE_VERSION (FAILED_PRECONDITION)"] == 1


def recorded_game(seed: int) -> tuple[replay_service_pb2.GetReplayResponse, dict[int, tuple[int, str]]]:
    """A two-player game played to its end by the engine, as GetReplay would return it, and every decision
    as its players would have noted the server's confirmations."""
    options = GameOptions(players=2)
    state = engine.new_game(options, seed)
    rng = random.Random(seed)
    replay = replay_service_pb2.GetReplayResponse(seed=seed)
    confirmed: dict[int, tuple[int, str]] = {}
    while not state.over:
        pending = engine.pending(state)
        assert pending is not None
        option = rng.choice(engine.legal(state))
        text = engine.option_text(option)
        replay.decisions.add(version=state.version, seat=pending.seat, text=text)
        confirmed[state.version] = (pending.seat, text)
        engine.apply(state, option, pending.seat)
    result = engine.result(state)
    assert result is not None
    replay.game.CopyFrom(
        game_pb2.GameSummary(
            game_id="g1",
            options=game_options_to_wire(options),
            status=game_pb2.GAME_STATUS_FINISHED,
            result=result_to_wire(result),
        )
    )
    replay.state_hash = engine.state_hash(state)
    return replay, confirmed


def test_a_record_holding_every_confirmed_decision_and_the_result_told_verifies() -> None:
    replay, confirmed = recorded_game(seed=3)
    assert check_replay(replay, confirmed, [replay.game.result, replay.game.result]) is None
    # A decision applied whose confirmation was lost with a connection is allowed in the record.
    assert check_replay(replay, {v: d for v, d in confirmed.items() if v != 5}) is None


def test_a_record_that_lost_or_changed_a_confirmed_decision_does_not_verify() -> None:
    replay, confirmed = recorded_game(seed=4)
    last = len(replay.decisions) - 1

    shortened = replay_service_pb2.GetReplayResponse()
    shortened.CopyFrom(replay)
    del shortened.decisions[last]
    problem = check_replay(shortened, confirmed)
    assert problem is not None and f"decision {last}" in problem and "confirmed" in problem

    # Another legal option in place of a confirmed one: the state it leads to is another one too.
    state = engine.new_game(GameOptions(players=2), 4)
    for record in replay.decisions[:10]:
        engine.apply(state, engine.parse_option(record.text), record.seat)
    other = next(o for o in engine.legal(state) if engine.option_text(o) != replay.decisions[10].text)
    tampered = replay_service_pb2.GetReplayResponse()
    tampered.CopyFrom(replay)
    tampered.decisions[10].text = engine.option_text(other)
    problem = check_replay(tampered, confirmed)
    assert problem is not None and "decision 10 was confirmed as" in problem
    # Even when nobody confirmed that decision, the engine's replay no longer ends where the record says.
    problem = check_replay(tampered, {v: d for v, d in confirmed.items() if v != 10})
    assert problem is not None and ("another state" in problem or "refuses" in problem)

    renumbered = replay_service_pb2.GetReplayResponse()
    renumbered.CopyFrom(replay)
    renumbered.decisions[3].version = 4
    assert "numbered 4" in (check_replay(renumbered, confirmed) or "")


def test_a_result_other_than_the_engines_does_not_verify() -> None:
    replay, confirmed = recorded_game(seed=5)
    told = game_pb2.GameResult()
    told.CopyFrom(replay.game.result)
    told.seats[0].score += 1
    assert "a player was told another result" in (check_replay(replay, confirmed, [told]) or "")
    replay.game.result.CopyFrom(told)
    assert "the record's result differs" in (check_replay(replay, confirmed) or "")


def test_new_games_a_full_server_refuses_are_counted_as_refused_not_failed(tmp_path: Path) -> None:
    """A server refusing new games with RESOURCE_EXHAUSTED (here its game limit; an overloaded server
    the same way) makes the hold count the refusals by reason and ask again, not fail."""
    import asyncio

    from kutnahora.bench.server_bench import server_command, start_process

    started = start_process(server_command(str(tmp_path / "games.db"), 2))  # at most 2 games at once
    try:
        settings = hold.Settings(
            games=4, players=2, connections=1, think=(0.0, 0.005), duration=2.5, report_every=1.0,
            kill_replica_at=None, restart_database_at=None, restart_database_command="", drain=False,
        )  # fmt: skip
        windows: list[hold.Window] = []
        tally = asyncio.run(hold.hold(f"127.0.0.1:{started.port}", settings, windows.append))
    finally:
        started.process.terminate()
        started.process.wait(30)
    assert tally.failed == 0, tally.errors
    assert sum(tally.games_refused.values()) > 0 and tally.decisions > 0
    assert [window.index for window in windows] == [1, 2, 3]
    assert any(name.startswith("games_refused:") for name in windows[-1].counters)
