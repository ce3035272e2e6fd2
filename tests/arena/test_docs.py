"""docs/arena.md documents what the arena really has: every flag and every metric."""

from __future__ import annotations

import re
from pathlib import Path

from kutnahora.arena.main import build_parser
from kutnahora.arena.metrics import ArenaMetrics

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "arena.md").read_text(encoding="utf-8")


def test_every_flag_is_documented() -> None:
    rows = [line for line in GUIDE.splitlines() if line.startswith("| `--")]
    for action in build_parser()._actions:
        if not action.option_strings or action.dest == "help":
            continue
        flag = max(action.option_strings, key=len)
        assert any(f"`{flag}`" in row for row in rows), flag


def test_every_metric_is_documented() -> None:
    documented = set(re.findall(r"`(kutnahora_arena_\w+?)(?:\{[^}]*\})?`", GUIDE))
    exported = set()
    for family in ArenaMetrics().registry.collect():
        exported.add(family.name + "_total" if family.type == "counter" else family.name)
    assert exported == documented
