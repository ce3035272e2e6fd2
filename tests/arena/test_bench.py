"""The arena benchmark runs and reports its figures (its speed is shown by running it, not asserted)."""

from __future__ import annotations

import re

import pytest

from kutnahora.bench import arena_bench


def test_the_benchmark_prints_cost_per_ticket_and_the_ladder(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        arena_bench.main(["--sizes", "60,120", "--repeats", "1", "--bots", "30", "--sim-seconds", "60"]) == 0
    )
    out = capsys.readouterr().out
    assert re.search(r"^\s+60\s+[\d.]+\s+\d+$", out, re.M) and re.search(
        r"^\s+120\s+[\d.]+\s+\d+$", out, re.M
    )
    ladder = re.search(
        r"(\d+) matches, ([\d.]+) matches/s, time to match p50 ([\d.]+) s, p99 ([\d.]+) s", out
    )
    assert ladder is not None and int(ladder.group(1)) > 0
    assert float(ladder.group(3)) <= float(ladder.group(4))


def test_the_benchmark_runs_the_ladder_over_grpc(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--sizes", "60", "--repeats", "1", "--bots", "9", "--sim-seconds", "10"]
    argv += ["--grpc", "--grpc-seconds", "4", "--game-seconds", "0.2,0.5"]
    assert arena_bench.main(argv) == 0
    out = capsys.readouterr().out
    found = re.search(
        r"over gRPC: 9 bots .*: (\d+) matches, ([\d.]+) matches/s, "
        r"time to match p50 ([\d.]+) s, p99 ([\d.]+) s",
        out,
    )
    assert found is not None and int(found.group(1)) > 0, out
    assert float(found.group(3)) <= float(found.group(4))
