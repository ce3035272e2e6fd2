"""The bare grpc.aio floor (:mod:`kutnahora.bench.bare_floor`) holds its games with the hold's measure."""

from __future__ import annotations

import re
import subprocess
import sys

from kutnahora.bench.bare_floor import Sizes


def test_the_floor_copies_the_game_servers_message_sizes() -> None:
    sizes = Sizes.measured(4, games=1)
    assert 300 < sizes.turn < 20_000  # a serialised four-seat observation
    assert 0 < sizes.accepted < 20 and 0 < sizes.decision < 20
    assert 50 < sizes.length < 1000


def test_the_floor_holds_games_over_two_client_processes_with_the_probe() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.bare_floor", "--games", "8", "--players", "2",
            "--connections", "2", "--think", "0-0.005", "--duration", "3", "--report-every", "1",
            "--client-processes", "2", "--probe-interval-ms", "20",
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    lines = re.findall(
        r"bare floor: +\d+ s +([\d.]+) decisions/s  latency p50 +[\d.]+  p99 +[\d.]+ ms .*games finished "
        r"(\d+), 0 failed, \d+ reconnects  probe (\d+) calls",
        done.stdout,
    )
    assert len(lines) == 3, done.stdout
    assert all(float(rate) > 0 for rate, _, _ in lines)
    assert int(lines[-1][1]) > 0  # games played to their end and replaced
    assert sum(int(calls) for _, _, calls in lines) >= 3  # a call every 20 ms (fewer on a loaded machine)
