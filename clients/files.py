"""Files written whole: a reader, or a stop or crash mid-write, never leaves half a file.

The long commands (the tournament runner, ``kutnahora-train``, the strength ladder) rewrite their
reports and records as they go, so that a run can be read while it plays and resumed after a stop.
:func:`write_json` writes to a temporary file beside the target and renames it over the target
(``os.replace``, atomic on one file system): the target holds the old whole file or the new one. A
temporary left by a writer killed mid-write (SIGKILL, a machine's end) is removed by the next process to
write the same target, once its writer is gone.
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from typing import Any

from kutnahora.hosting.processes import running

_swept: set[Path] = set()
"""The targets whose leftover temporaries this process has looked for (once each)."""


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` to ``path`` as indented JSON, atomically; its folder is made if missing.

    The temporary file is named for the writing process (two processes never share one), is made with
    the permissions any new file gets (the umask's), and is removed if the writing fails, the error going
    on to the caller."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with temporary.open("w", encoding="utf-8") as out:
            json.dump(value, out, indent=1)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if path not in _swept:
        _swept.add(path)
        _remove_leftovers(path)


def _remove_leftovers(path: Path) -> None:
    """Delete the temporaries of ``path`` whose writing process no longer runs (killed mid-write)."""
    prefix = f".{path.name}."
    for leftover in path.parent.glob(f"{glob.escape(prefix)}*.part"):
        pid = leftover.name[len(prefix) : -len(".part")]
        if pid.isdigit() and not running(int(pid)):
            leftover.unlink(missing_ok=True)
