"""A few seconds of fuzzing on every method and the Play stream (``kutnahora-fuzz`` runs longer).

Hypothesis draws raw bytes, valid requests with a few bytes changed, and messages with random fields;
every answer must be a status the protocol guide names (never UNKNOWN or INTERNAL) with a short
sentence, every stream must end, the server must still answer, and its log must hold no traceback and
no long line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kutnahora.bench import fuzz


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[fuzz.Served]:
    with fuzz.serve(tmp_path_factory.mktemp("fuzz")) as served:
        yield served


def test_every_method_answers_every_body_with_a_named_status(served: fuzz.Served) -> None:
    target = fuzz.prepare(served.channel)
    report = fuzz.fuzz(served.channel, target, examples=200, play_share=0.0, stop_at_first=True)
    assert report.requests >= 150
    assert fuzz.alive(served.channel) is None


def test_play_streams_answer_every_message_sequence(served: fuzz.Served) -> None:
    target = fuzz.prepare(served.channel)
    report = fuzz.fuzz(served.channel, target, examples=40, play_share=1.0, stop_at_first=True)
    assert report.play_streams >= 30
    assert fuzz.alive(served.channel) is None


def test_the_fuzzed_server_logged_no_fault_and_no_long_line(served: fuzz.Served) -> None:
    assert served.log_path is not None
    lines = Path(served.log_path).read_text().splitlines()
    assert lines  # the refusals were logged (within the budget)
    assert fuzz.log_problems(lines) == []


def test_the_fuzzer_covers_every_method() -> None:
    from kutnahora.server.service import KutnaHoraService

    paths = {f"/{s.full_name}/{m.name}" for s in KutnaHoraService.services() for m in s.methods}
    assert {method.path for method in fuzz.METHODS} == paths
    assert fuzz.PLAY.path == "/kutnahora.v1.PlayService/Play"
