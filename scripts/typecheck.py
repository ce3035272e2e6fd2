"""Type-check the installed package ``kutnahora`` with mypy, under the names it is installed with.

The repository keeps its layers in top-level folders (``engine/``, ``server/``, ...), and pyproject.toml
maps them to ``kutnahora.engine``, ``kutnahora.server`` and so on. mypy reads folders, not that mapping,
so this script lays the same mapping out as a tree of links under ``build/typecheck/kutnahora`` (with
``build_backend/package_layout.py``, as the compiled build does) and runs mypy on it: every module is
checked under its installed name. Arguments go to mypy::

    python scripts/typecheck.py            # check every package, setup.py and the build backend
    python scripts/typecheck.py --strict   # any extra mypy flags
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BACKEND = str(ROOT / "build_backend")
sys.path.insert(0, BACKEND)
from package_layout import lay_out  # noqa: E402 (found through the line above)

TREE = ROOT / "build" / "typecheck"


def main() -> int:
    packages = lay_out(TREE)
    command = [sys.executable, "-m", "mypy"]
    for package in packages:
        command += ["-p", package]
    env = dict(os.environ, MYPYPATH=str(TREE))
    packages_checked = subprocess.call([*command, *sys.argv[1:]], cwd=ROOT, env=env)
    # the build's own files (setup.py and the backend), which mypy checks as files, in a run of their own
    build = [sys.executable, "-m", "mypy", "--no-warn-unused-configs", "setup.py", "build_backend"]
    build += sys.argv[1:]
    return packages_checked or subprocess.call(build, cwd=ROOT, env=dict(os.environ, MYPYPATH=BACKEND))


if __name__ == "__main__":
    sys.exit(main())
