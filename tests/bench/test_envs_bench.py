"""kutnahora-envs-bench measures every target on each engine and prints one line each, with the ratios to
the engine and, for the native core, to the pure engine's figure of the same target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kutnahora.bench.envs_bench import PYTHON_ONLY, TARGETS, main
from kutnahora.native import native_available


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
    engines = ["python", "native"] if native_available() else ["python"]
    expected = [(t, e) for t in TARGETS for e in engines if e == "python" or t not in PYTHON_ONLY]
    assert [(f["target"], f["engine"]) for f in figures] == expected
    assert all(f["median"] > 0 for f in figures)
    by = {(f["target"], f["engine"]): f for f in figures}
    assert by["engine", "python"]["engine_ratio"] == 1.0
    assert by["engine+observe", "python"]["ratio"] == 1.0
    for (target, engine), figure in by.items():
        if engine == "native":
            assert figure["native_ratio"] == pytest.approx(figure["median"] / by[target, "python"]["median"])
        else:
            assert figure["native_ratio"] is None


def test_the_pure_engine_alone_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "envs.json"
    argv = ["--players", "3", "--duration", "0", "--repeats", "1", "--cpu", "-1", "--targets", "pettingzoo"]
    assert main([*argv, "--engines", "python", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["figures"]
    assert {f["engine"] for f in figures} == {"python"}
    assert [f["target"] for f in figures] == ["engine", "engine+observe", "pettingzoo"]


def test_an_unknown_target_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--targets", "engine,chess"])
    assert "unknown target chess" in capsys.readouterr().err
