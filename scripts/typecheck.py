"""Type-check the installed package ``kutnahora`` with mypy, under the names it is installed with.

The repository keeps its layers in top-level folders (``engine/``, ``server/``, ...), and pyproject.toml
maps them to ``kutnahora.engine``, ``kutnahora.server`` and so on. mypy reads folders, not that mapping,
so this script lays the same mapping out as a tree of links under ``build/typecheck/kutnahora`` and runs
mypy on it: every module is checked under its installed name. Arguments go to mypy::

    python scripts/typecheck.py            # check every package, setup.py and the build backend
    python scripts/typecheck.py --strict   # any extra mypy flags
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"


def package_dirs() -> dict[str, Path]:
    """The ``kutnahora.*`` packages that pyproject.toml maps to folders, with those folders."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapping.items()}


def build_tree() -> list[str]:
    """Lay out the link tree and return the packages to check (every mapped one but the generated code)."""
    shutil.rmtree(TREE, ignore_errors=True)
    dirs = package_dirs()
    top = TREE / "kutnahora"
    top.mkdir(parents=True)
    for entry in dirs["kutnahora"].iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, top / entry.name)
    checked: list[str] = []
    for name, folder in sorted(dirs.items()):
        if name == "kutnahora":
            continue
        os.symlink(folder, TREE / Path(*name.split(".")))
        checked.append(name)
    return checked


def main() -> int:
    packages = build_tree()
    command = [sys.executable, "-m", "mypy"]
    for package in packages:
        command += ["-p", package]
    env = dict(os.environ, MYPYPATH=str(TREE))
    packages_checked = subprocess.call([*command, *sys.argv[1:]], cwd=ROOT, env=env)
    # the build's own files (setup.py and the backend), which mypy checks as files, in a run of their own
    build = [sys.executable, "-m", "mypy", "--no-warn-unused-configs", "setup.py", "build_backend/backend.py"]
    build += sys.argv[1:]
    return packages_checked or subprocess.call(build, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
