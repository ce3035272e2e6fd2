"""``kutnahora-fuzz`` runs end to end against a server it starts and reports what it sent and found."""

from __future__ import annotations

import re
import subprocess
import sys


def test_the_fuzz_command_reports_requests_streams_memory_and_no_problem() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.fuzz", "--examples", "40", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    sent = re.search(r"(\d+) requests and (\d+) Play streams", done.stdout)
    assert sent is not None and int(sent[1]) >= 20 and int(sent[2]) >= 5, done.stdout
    assert "0 problems" in done.stdout
    assert "server RSS" in done.stdout and "server log" in done.stdout


def test_the_fuzz_command_refuses_a_count_of_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.fuzz", "--examples", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "positive" in done.stderr
