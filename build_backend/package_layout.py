"""The package as it is installed, laid out from the repository's folders, and the compiled build's switch.

pyproject.toml maps the package's modules to top-level folders (``kutnahora.engine`` is ``engine/``, and
so on). Tools that read folders, not that mapping, need the modules under their installed names: mypy
(scripts/typecheck.py) and mypyc (setup.py's compiled build). :func:`lay_out` gives them a tree of links
that follows the mapping. Importable by setup.py and the build backend (this folder is the backend's path)
and by scripts/typecheck.py.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPILE_VARIABLE = "KUTNAHORA_COMPILE"


def compiling() -> bool:
    """Whether ``KUTNAHORA_COMPILE`` asks for the compiled build (setup.py)."""
    return os.environ.get(COMPILE_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


def package_dirs() -> dict[str, Path]:
    """The ``kutnahora.*`` packages that pyproject.toml maps to folders, with those folders."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapping.items()}


def lay_out(tree: Path) -> list[str]:
    """Replace ``tree`` with links that put every module under its installed name
    (``tree/kutnahora/engine/view.py``), and return the packages mapped to folders of their own (all but
    ``kutnahora`` itself, whose folder holds the generated wire code)."""
    shutil.rmtree(tree, ignore_errors=True)
    dirs = package_dirs()
    top = tree / "kutnahora"
    top.mkdir(parents=True)
    for entry in dirs["kutnahora"].iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, top / entry.name)
    packages: list[str] = []
    for name, folder in sorted(dirs.items()):
        if name == "kutnahora":
            continue
        os.symlink(folder, tree / Path(*name.split(".")))
        packages.append(name)
    return packages
