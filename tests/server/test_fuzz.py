"""A few seconds of fuzzing on every method and the Play stream (``kutnahora-fuzz`` runs longer).

Hypothesis draws raw bytes, valid requests with a few bytes changed, and messages with random fields;
every answer must be a status the protocol guide names (never UNKNOWN or INTERNAL) with a short
sentence, every stream must end, the server must still answer, and its log must hold no traceback and
no long line. The fuzzer runs in a process of its own, as ``kutnahora-fuzz`` does, with
``--stop-at-first`` so that a failure is shrunk to its smallest example and printed.
"""

from __future__ import annotations

import re
import subprocess
import sys

from kutnahora.bench import fuzz


def run_fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.fuzz", "--stop-at-first", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_method_and_the_play_stream_answer_every_input_with_a_named_status() -> None:
    done = run_fuzz("--examples", "250", "--play-share", "0.2")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    sent = re.search(r"(\d+) requests and (\d+) Play streams .*; 0 problems", done.stdout)
    assert sent is not None, done.stdout
    assert int(sent[1]) >= 150 and int(sent[2]) >= 40


def test_the_fuzzer_covers_every_method() -> None:
    from kutnahora.server.service import KutnaHoraService

    paths = {f"/{s.full_name}/{m.name}" for s in KutnaHoraService.services() for m in s.methods}
    assert {method.path for method in fuzz.METHODS} == paths
    assert fuzz.PLAY.path == "/kutnahora.v1.PlayService/Play"


def test_the_log_check_finds_faults_and_long_lines() -> None:
    assert fuzz.log_problems(['{"event": "request refused", "level": "info"}']) == []
    assert fuzz.log_problems(['{"event": "unexpected error", "level": "error", "exception": "Traceback"}'])
    assert fuzz.log_problems(["x" * (fuzz.MAX_LOG_LINE + 1)])
