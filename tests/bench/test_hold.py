"""``kutnahora-hold`` runs end to end: it holds games with slow bots and prints the server's health."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from kutnahora.bench import hold


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
    finished = re.search(r"(\d+) decisions; games finished (\d+), abandoned 0; 0 failed", done.stdout)
    assert finished is not None, done.stdout
    assert int(finished.group(1)) > 0 and int(finished.group(2)) >= 6  # every game played to its end


def test_the_hold_refuses_bad_settings() -> None:
    with pytest.raises(SystemExit, match="--think"):
        hold.parse_think("slow")
    with pytest.raises(SystemExit, match="PostgreSQL"):
        hold.main(["--replicas", "2"])
