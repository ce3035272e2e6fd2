"""``KUTNAHORA_ENGINE``: which engine plays, and ``kutnahora-sim`` printing the same games with either."""

from __future__ import annotations

import json

import pytest

from kutnahora.native import NATIVE, PYTHON, EngineUnavailable, active_engine, native_available
from kutnahora.native.sim import main as sim


def test_the_variable_chooses_and_unset_prefers_the_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUTNAHORA_ENGINE", raising=False)
    assert active_engine() == (NATIVE if native_available() else PYTHON)
    monkeypatch.setenv("KUTNAHORA_ENGINE", " Python ")
    assert active_engine() == PYTHON
    monkeypatch.setenv("KUTNAHORA_ENGINE", "rust")
    with pytest.raises(EngineUnavailable, match="must be `native` or `python`"):
        active_engine()
    monkeypatch.setenv("KUTNAHORA_ENGINE", "native")
    if native_available():
        assert active_engine() == NATIVE
    else:
        with pytest.raises(EngineUnavailable, match="not built"):
            active_engine()


@pytest.mark.skipif(not native_available(), reason="the native core is not built")
@pytest.mark.parametrize("players", [2, 4])
def test_the_simulator_prints_the_same_games_with_either_engine(
    players: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = {}
    for engine in (PYTHON, NATIVE):
        monkeypatch.setenv("KUTNAHORA_ENGINE", engine)
        assert sim(["--players", str(players), "--games", "12", "--seed", "77", "--events", "--json"]) == 0
        reports[engine] = json.loads(capsys.readouterr().out)
    assert reports[PYTHON]["engine"] == PYTHON and reports[NATIVE]["engine"] == NATIVE
    same = (
        "games",
        "finished",
        "errors",
        "decisions",
        "decisions_per_game",
        "mean_score",
        "win_share_by_seat",
    )
    assert {k: reports[PYTHON][k] for k in same} == {k: reports[NATIVE][k] for k in same}
    assert reports[NATIVE]["finished"] == 12


def test_asking_for_a_missing_core_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kutnahora.native as native

    monkeypatch.setattr(native, "native_available", lambda: False)
    monkeypatch.setenv("KUTNAHORA_ENGINE", "native")
    assert sim(["--games", "1"]) == 2
    assert "not built" in capsys.readouterr().err
