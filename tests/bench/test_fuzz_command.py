"""``kutnahora-fuzz`` runs end to end against a server it starts and reports what it sent and found."""

from __future__ import annotations

import re

import pytest

from kutnahora.bench import fuzz


def test_the_fuzz_command_reports_requests_streams_memory_and_no_problem(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert fuzz.main(["--examples", "40", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    sent = re.search(r"(\d+) requests and (\d+) Play streams", out)
    assert sent is not None and int(sent[1]) >= 20 and int(sent[2]) >= 5, out
    assert "0 problems" in out
    assert "server RSS" in out and "server log" in out


def test_the_fuzz_command_refuses_a_count_of_nothing() -> None:
    with pytest.raises(SystemExit, match="positive"):
        fuzz.main(["--examples", "0"])
