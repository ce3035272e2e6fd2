"""``python -m kutnahora.bench.engine_share`` times the engine's calls inside a served game and gives their
share of the server's CPU per decision (a smoke test of a short run, not a speed test)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import kutnahora
from kutnahora.bench import engine_share
from kutnahora.native import native_available


def test_a_timed_function_counts_its_calls_and_their_cpu() -> None:
    totals: engine_share.Totals = {}

    def spin(n: int) -> int:
        if n < 0:
            raise ValueError("negative")
        deadline = time.thread_time() + 0.01
        while time.thread_time() < deadline:
            pass
        return n

    timed = engine_share.timed(totals, "spin", spin)
    assert timed(3) == 3 and timed(4) == 4
    with pytest.raises(ValueError, match="negative"):
        timed(-1)
    calls, nanoseconds = totals["spin"]
    assert calls == 3
    assert nanoseconds >= 2 * 10_000_000 * 0.9


def test_shares_are_taken_per_decision_between_two_snapshots() -> None:
    before = {"cpu": 10.0, "totals": {"apply": [100, 5_000_000], "observe": [100, 1_000_000]}}
    parts = {"apply": [300, 25_000_000], "owed": [200, 1_000_000], "observe": [302, 21_000_000]}
    after = {"cpu": 10.2, "totals": {**parts, "encode_observation": [202, 60_000_000]}}
    figures = engine_share.shares(before, after)
    assert figures["decisions"] == 200
    assert figures["server_us"] == pytest.approx(1000.0)  # 0.2 CPU seconds over 200 decisions
    assert figures["decision_us"] == pytest.approx(100.0 + 5.0)  # apply 20 ms, owed 1 ms
    assert figures["view_us"] == pytest.approx(100.0)
    assert figures["observation_us"] == pytest.approx(300.0)
    assert figures["decision_share"] == pytest.approx(0.105)
    assert figures["wire_share"] == pytest.approx(0.2)
    with pytest.raises(SystemExit, match="no decision"):
        engine_share.shares(before, before)


@pytest.mark.skipif(
    "kutnahora.wire.seat_observation" in kutnahora.compiled_modules(),
    reason="the served observation runs compiled, past the timers",
)
def test_a_short_run_against_a_served_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "share.json"
    argv = ["--games", "3", "--warmup", "0.5", "--duration", "1.5", "--core-seconds", "0.05"]
    assert engine_share.main([*argv, "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["decisions"] > 20
    parts = figures["parts_us"]
    assert parts["apply"] > 0 and parts["observe"] > 0 and parts["owed"] > 0
    assert 0 < figures["view_us"] <= figures["observation_us"]
    total = figures["decision_share"] + figures["view_share"] + figures["wire_share"]
    assert figures["decision_share"] > 0 and total < 1  # gRPC, the store and the rest take the remainder
    if native_available():
        assert figures["core_speedup"] > 1
        assert figures["gain"] == pytest.approx(figures["decision_share"] * (1 - 1 / figures["core_speedup"]))
    assert "server CPU per decision" in capsys.readouterr().out
