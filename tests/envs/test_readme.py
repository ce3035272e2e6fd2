"""The examples of the learning environments' page, docs/envs.md, run as written."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "envs.md"


def examples() -> list[str]:
    """The Python blocks of the page's section on the three adapters (up to the next section, if any)."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## OpenSpiel, PettingZoo, Gymnasium")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end >= 0 else len(text)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_section_has_an_example_per_framework() -> None:
    blocks = examples()
    assert len(blocks) == 3
    assert "pettingzoo_env" in blocks[0] and "KutnaHora-v0" in blocks[1] and "ISMCTSBot" in blocks[2]


def run(index: int, capsys: pytest.CaptureFixture[str]) -> str:
    exec(compile(examples()[index], f"docs/envs.md example {index + 1}", "exec"), {"__name__": "readme"})
    return capsys.readouterr().out.strip()


def test_the_pettingzoo_example_ends_a_game(capsys: pytest.CaptureFixture[str]) -> None:
    returns = ast.literal_eval(run(0, capsys))
    assert set(returns) == {"seat_0", "seat_1", "seat_2"}
    assert sum(returns.values()) == pytest.approx(0.0)


def test_the_gymnasium_example_ends_a_game(capsys: pytest.CaptureFixture[str]) -> None:
    label, value = run(1, capsys).split(":")
    assert label == "return against the greedy bot" and -1.0 <= float(value) <= 1.0


def test_the_openspiel_example_ends_a_game(capsys: pytest.CaptureFixture[str]) -> None:
    label, value = run(2, capsys).split(":")
    returns = ast.literal_eval(value.strip())
    assert label == "returns (IS-MCTS, random)" and len(returns) == 2 and sum(returns) == 0.0
