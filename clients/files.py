"""Files written whole: a reader, or a stop or crash mid-write, never leaves half a file.

The long commands (the tournament runner, ``kutnahora-train``, the strength ladder) rewrite their
reports and records as they go, so that a run can be read while it plays and resumed after a stop.
:func:`write_json` writes to a temporary file beside the target and renames it over the target
(``os.replace``, atomic on one file system): the target holds the old whole file or the new one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


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
