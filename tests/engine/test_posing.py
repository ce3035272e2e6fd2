"""One function per decision kind poses its options: the rules pose with it, the resampler asks it again
(``test_resample.py`` checks, over whole games, that asking again gives the options the rules posed)."""

from __future__ import annotations

import ast
from pathlib import Path

from kutnahora.engine import DecisionKind
from kutnahora.engine.posing import POSERS

ENGINE = Path(__file__).resolve().parents[2] / "engine"
"""The engine's sources (read as files: a compiled build has no source to inspect)."""


def test_every_kind_of_decision_has_its_function() -> None:
    assert set(POSERS) == set(DecisionKind)
    assert all(callable(poser) for poser in POSERS.values())


def test_the_rules_pose_every_decision_with_the_options_of_a_function_of_the_table() -> None:
    """No rule module builds a decision's options inline: each PendingDecision(...) it makes takes its
    options from a variable or from a call, never from a literal tuple or a comprehension."""
    for module in ("barbara", "flow", "income", "mine", "rounds", "town"):
        tree = ast.parse((ENGINE / f"{module}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PendingDecision":
                options = node.args[2]
                assert isinstance(options, ast.Name | ast.Call), (module, ast.unparse(node))
                if isinstance(options, ast.Call):
                    assert getattr(options.func, "id", "") not in ("tuple", "list"), ast.unparse(node)
