"""The server benchmark runs end to end and reports its figures (a smoke test, not a speed test)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import socket
import statistics
from pathlib import Path

import pytest

import kutnahora
from kutnahora.bench.server_bench import GameRun, Stats, main, play_seat, server_times, try_read_metrics
from kutnahora.v1 import play_service_pb2


def test_the_benchmark_reports_decisions_latency_and_the_echo_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A short run over a real server: decisions were made, none rejected, every figure reported."""
    out = tmp_path / "bench.json"
    argv = [
        "--games",
        "4",
        "--duration",
        "1.5",
        "--warmup",
        "0.5",
        "--echo-duration",
        "0.5",
        "--echo-callers",
        "2",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    results = json.loads(out.read_text())
    assert results["decisions"] > 0
    assert results["rejected"] == 0
    assert results["drivers_failed"] == 0
    assert results["decisions_per_s"] > 0
    assert 0 < results["latency_p50_ms"] <= results["latency_p99_ms"]
    assert results["echo_stream_msgs_per_s"] > 0 and results["echo_unary_per_s"] > 0
    assert results["echo_callers"] == 2
    assert results["echo_cpu_us_per_unary_call"] > 0 and results["echo_cpu_us_per_stream_msg"] > 0
    assert results["server_cpu_us_per_decision"] > 0
    assert results["ratio_to_echo"] == results["decisions_per_s"] / results["echo_stream_msgs_per_s"]
    assert results["server_cpu_per_echo_cpu"] > 0
    # from the server's metrics: handling a decision holds storing it and building the next observation
    handling = results["server_submit_us_per_decision"]
    assert 0 < results["server_observation_us_per_decision"] < handling
    assert 0 < results["server_store_insert_us_per_decision"] < handling
    assert results["server_writes_per_commit"] == 1  # SQLite at NORMAL commits each write by itself
    printed = capsys.readouterr()
    assert "decisions/s" in printed.out
    assert re.search(r"in the server +handling a decision \d+ µs, of which the next observation", printed.out)
    # the server started here runs this installation's modules: the report says whether they are compiled
    compiled = len(kutnahora.compiled_modules())
    assert results["compiled_modules"] == compiled
    build = f"a compiled server ({compiled} of" if compiled else "a pure-Python server"
    assert build in printed.out.splitlines()[0]
    assert "kutnahora-bench: playing 4 games" in printed.err, "no progress was shown while measuring"


def test_rounds_pair_each_server_run_with_an_echo_run_and_report_medians(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rounds.json"
    argv = ["--games", "4", "--duration", "1", "--warmup", "0.3"]
    argv += ["--echo-duration", "0.3", "--echo-callers", "2"]
    assert main([*argv, "--rounds", "2", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    rounds = results["rounds"]
    assert len(rounds) == 2
    for measured in rounds:
        assert measured["decisions"] > 0
        assert measured["server_cpu_per_echo_cpu"] == (
            measured["server_cpu_us_per_decision"] / measured["echo_cpu_us_per_stream_msg"]
        )
    assert results["decisions"] == sum(measured["decisions"] for measured in rounds)
    ratios = [measured["server_cpu_per_echo_cpu"] for measured in rounds]
    assert results["server_cpu_per_echo_cpu"] == statistics.median(ratios)
    assert results["server_cpu_us_per_decision"] == statistics.median(
        m["server_cpu_us_per_decision"] for m in rounds
    )
    printed = capsys.readouterr()
    assert "2 rounds, each a fresh server and then the echo" in printed.out
    assert "round 2 of 2: the echo ceiling" in printed.err
    with pytest.raises(SystemExit, match="--rounds must be at least 1"):
        main([*argv, "--rounds", "0"])


def test_an_unreachable_target_is_an_error_not_a_figure() -> None:
    """Driving a server that is not there measures nothing, and says so instead of printing zeros."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound but not listening: connections are refused
        argv = [
            "--target",
            f"127.0.0.1:{port}",
            "--no-echo",
            "--games",
            "2",
            "--duration",
            "0.5",
            "--warmup",
            "0.2",
        ]
        with pytest.raises(SystemExit, match=f"no decision was made at 127.0.0.1:{port}.*UNAVAILABLE"):
            main(argv)


class _EndedCall:
    """A Play stream that answers its PlayStart with the game's end, as each seat's stream does."""

    def __init__(self) -> None:
        self.closed = False

    async def write(self, request: object) -> None:
        pass

    async def read(self) -> object:
        return play_service_pb2.PlayResponse(game_ended=play_service_pb2.GameEnded())

    async def done_writing(self) -> None:
        self.closed = True


class _Play:
    def __init__(self) -> None:
        self.calls: list[_EndedCall] = []

    def Play(self, metadata: object = None) -> _EndedCall:
        self.calls.append(_EndedCall())
        return self.calls[-1]


def test_a_game_is_counted_once_though_every_seat_sees_it_end() -> None:
    """Each of a game's seats reads its GameEnded; the report counts games, not seats."""

    async def four_seats() -> Stats:
        stats, run, play = Stats(measuring=True), GameRun(), _Play()
        await asyncio.gather(
            *(play_seat(play, "g", seat, "t", run, stats, random.Random(seat)) for seat in range(4))  # type: ignore[arg-type]
        )
        assert all(call.closed for call in play.calls)
        return stats

    assert asyncio.run(four_seats()).games_finished == 1


def test_a_metrics_endpoint_that_does_not_answer_leaves_out_only_the_servers_own_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound but not listening: connections are refused
        assert asyncio.run(try_read_metrics(f"http://127.0.0.1:{port}/metrics")) is None
    assert asyncio.run(try_read_metrics(None)) is None
    assert "the server's metrics could not be read" in capsys.readouterr().err
    assert server_times({"decisions": 5.0}, {"decisions": 5.0}) == {}


def test_unary_play_with_a_shared_quota_store_is_measured_against_the_unary_echo(tmp_path: Path) -> None:
    """``--unary --quota-store redis://…``: the seats play over SubmitDecision with the seat limits in
    Redis; no decision is refused, and the ratios are to the echo's unary calls."""
    from tests.redis_store import URL, require_redis

    require_redis()
    out = tmp_path / "bench.json"
    argv = ["--games", "3", "--duration", "1.5", "--warmup", "0.5", "--echo-duration", "0.5"]
    assert main([*argv, "--echo-callers", "2", "--unary", "--quota-store", URL, "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["playing"] == "unary" and results["quota_store"] == URL
    assert results["decisions"] > 0 and results["games_finished"] >= 0
    assert results["rejected"] == 0 and results["drivers_failed"] == 0
    assert results["ratio_to_echo"] == results["decisions_per_s"] / results["echo_unary_per_s"]
    assert results["server_submit_us_per_decision"] > 0
    # the server's keys in Redis were deleted when it stopped
    import redis

    client = redis.Redis.from_url(URL)
    try:
        assert not list(client.scan_iter(match="kutnahora-bench-*"))
    finally:
        client.close()
