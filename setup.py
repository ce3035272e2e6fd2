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
not named as its modules are (``kutnahora.engine``...), so the sources are first laid out under their
module names in ``build/mypyc/`` (links, by ``build_backend/package_layout.py``, as the type check does)
and compiled from there.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "build_backend"))  # on the path already when the backend runs this file
from package_layout import compiling, lay_out  # noqa: E402 (found through the line above)

PACKAGE_INIT = ROOT / "protos" / "kutnahora" / "__init__.py"
"""Where the list of compiled modules is written once (``kutnahora.COMPILABLE``)."""
STAGE = Path("build", "mypyc")
"""Where the sources are laid out under their module names (``build/mypyc/kutnahora/engine/view.py``)."""


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

    lay_out(ROOT / STAGE)
    # relative paths, as setuptools wants them; mypy names each module from the package folders above it
    paths = [str(STAGE / (name.replace(".", "/") + ".py")) for name in compilable()]
    return list(
        mypycify(
            ["--config-file=", "--ignore-missing-imports", *paths],
            opt_level="3",
            group_name="kutnahora",
            target_dir=str(Path("build", "mypyc-c")),  # beside the tree of links, not inside a linked folder
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
