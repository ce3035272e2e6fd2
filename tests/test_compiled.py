"""The compiled build (setup.py, ``KUTNAHORA_COMPILE=1``): what it compiles, and that a checkout runs its
sources.

CI builds the compiled wheel and runs the engine, server, environment, benchmark and client tests against
it with ``KUTNAHORA_EXPECT_COMPILED=1``, where the last test checks that every listed module did load
compiled.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import kutnahora

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "build_backend"))
from package_layout import package_dirs  # noqa: E402 (found through the line above)

FOLDERS = package_dirs()
"""The folders setup.py lays out for mypyc, by package (pyproject.toml's package-dir)."""


def _source(module: str) -> Path:
    package, _, name = module.rpartition(".")
    return FOLDERS[package] / f"{name}.py"


def test_every_compiled_module_is_a_source_of_the_package() -> None:
    assert kutnahora.COMPILABLE, "the compiled build names no modules"
    for module in kutnahora.COMPILABLE:
        assert module.rpartition(".")[0] in FOLDERS, f"{module} is outside the folders setup.py stages"
        assert _source(module).is_file(), f"{module} has no source file"


def test_the_classes_that_are_pickled_or_copied_stay_uncompiled() -> None:
    """mypyc's frozen dataclasses cannot be pickled or deep-copied, and the game state (pickled by the
    OpenSpiel adapter, copied by GameState.copy) is made of them: the modules that define the state, its
    options, events, components and game options are not compiled."""
    for module in ("state", "options", "events", "components", "game"):
        assert f"kutnahora.engine.{module}" not in kutnahora.COMPILABLE


def test_the_modules_run_compiled_exactly_when_expected() -> None:
    """A checkout runs its sources: a compiled module left beside its source would load instead of it and
    hide every edit. Under ``KUTNAHORA_EXPECT_COMPILED=1`` (CI's run of the compiled wheel) every listed
    module must load compiled."""
    compiled = kutnahora.compiled_modules()
    if os.environ.get("KUTNAHORA_EXPECT_COMPILED") == "1":
        assert compiled == kutnahora.COMPILABLE
    else:
        assert compiled == (), f"compiled modules load instead of their sources: {compiled}"
