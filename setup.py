"""The optional compiled build: with ``KUTNAHORA_COMPILE=1``, a wheel's hot modules are compiled with mypyc.

Everything else about the package (its name, folders, data and commands) is in pyproject.toml. By default
nothing is compiled and the wheel is pure Python. With ``KUTNAHORA_COMPILE=1`` (and a C compiler), the
modules a decision runs through most, the engine's rules, views and prices and the server's observation
encoder (``kutnahora.COMPILABLE``, in protos/kutnahora/__init__.py), are compiled by mypyc into C
extensions that sit beside their sources in the wheel and load instead of them. They behave as the sources
do; the classes that are pickled, copied or built from data (the game state, options, components, events,
game options) stay in uncompiled modules, since mypyc's frozen dataclasses can be neither pickled nor
deep-copied.

    KUTNAHORA_COMPILE=1 pip wheel --no-deps -w dist .     # a compiled wheel for this platform

mypyc names modules from the folders they sit in, and the package's folders (engine/, server/, protos/) are
not named as its modules are (``kutnahora.engine``...), so the sources are first copied into
``build/mypyc/kutnahora/`` under their module names and compiled from there.
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent
COMPILE_VARIABLE = "KUTNAHORA_COMPILE"
PACKAGE_INIT = ROOT / "protos" / "kutnahora" / "__init__.py"
"""Where the list of compiled modules is written once (``kutnahora.COMPILABLE``)."""
STAGE = Path("build", "mypyc")
"""Where the sources are copied under their module names (``build/mypyc/kutnahora/engine/view.py``)."""
STAGED = {"protos/kutnahora": "kutnahora", "engine": "kutnahora/engine", "server": "kutnahora/server"}
"""Folders copied under their module names for mypyc (the compiled modules and what they import)."""


def compiling() -> bool:
    """Whether ``KUTNAHORA_COMPILE`` asks for the compiled build."""
    return os.environ.get(COMPILE_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


def compilable() -> list[str]:
    """``kutnahora.COMPILABLE``, read from the package's source (it is not importable while building)."""
    tree = ast.parse(PACKAGE_INIT.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "COMPILABLE" for target in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise RuntimeError(f"{PACKAGE_INIT} names no COMPILABLE modules")


def compiled_extensions() -> list[Any]:
    """The C extensions of the compiled build (none unless :func:`compiling`)."""
    if not compiling():
        return []
    from mypyc.build import mypycify

    stage = ROOT / STAGE
    if stage.exists():
        shutil.rmtree(stage)
    for source, target in STAGED.items():
        shutil.copytree(
            ROOT / source,
            stage / target,
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "data", "static", "templates"),
        )
    # relative paths, as setuptools wants them; mypy names each module from the package folders above it
    paths = [str(STAGE / (name.replace(".", "/") + ".py")) for name in compilable()]
    return list(
        mypycify(
            ["--config-file=", "--ignore-missing-imports", *paths],
            opt_level="3",
            group_name="kutnahora",
            target_dir=str(STAGE / "c"),
        )
    )


def remove_compiled_leftovers() -> None:
    """Delete the extensions an earlier compiled build left in setuptools' build folder, from where a
    pure-Python wheel would otherwise pick them up."""
    for folder in (ROOT / "build").glob("lib*"):
        for leftover in [*folder.rglob("*.so"), *folder.rglob("*.pyd")]:
            leftover.unlink()


if compiling():
    setup(ext_modules=compiled_extensions())
else:
    remove_compiled_leftovers()
    setup()
