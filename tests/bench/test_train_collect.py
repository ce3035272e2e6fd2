"""The training-collection benchmark collects on each engine, takes the same samples on both, and splits
each collection's CPU into its parts, which add up to the whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kutnahora.bench.train_collect import PARTS, main
from kutnahora.native import native_available

pytest.importorskip("torch")


def test_the_bench_collects_on_each_engine_and_splits_the_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "collect.json"
    league = "self=2,past=2,greedy=1,mcts:2=1"
    assert (
        main(["--batch", "96", "--games", "4", "--repeats", "1", "--opponents", league, "--json", str(out)])
        == 0
    )
    printed = capsys.readouterr().out
    rounds = json.loads(out.read_text())["rounds"]
    engines = ["python", "native"] if native_available() else ["python"]
    assert list(rounds) == engines
    for engine in engines:
        (figures,) = rounds[engine]
        assert figures["samples"] >= 96 and figures["cpu"] > 0
        assert {"rules", "vectors", "network", "greedy", "mcts"} <= set(figures)
        assert sum(figures.get(part, 0.0) for part in PARTS) == pytest.approx(figures["cpu"])
        assert f"{engine}: " in printed and "samples per CPU second" in printed
    assert len({rounds[engine][0]["samples"] for engine in engines}) == 1
