"""kutnahora-envs-bench measures every target and prints one line each, with the ratio to the engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kutnahora.bench.envs_bench import TARGETS, main


def test_the_bench_prints_every_target_against_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "envs.json"
    assert (
        main(["--players", "2", "--duration", "0", "--repeats", "1", "--cpu", "-1", "--json", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    for target in TARGETS:
        assert f"\n{target} " in printed
    figures = json.loads(out.read_text())["figures"]
    assert [f["target"] for f in figures] == list(TARGETS)
    assert all(f["median"] > 0 for f in figures)
    assert figures[0]["target"] == "engine" and figures[0]["engine_ratio"] == 1.0
    assert figures[1]["target"] == "engine+observe" and figures[1]["ratio"] == 1.0


def test_an_unknown_target_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--targets", "engine,chess"])
    assert "unknown target chess" in capsys.readouterr().err
