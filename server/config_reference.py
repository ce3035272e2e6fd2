"""``python -m kutnahora.server.config_reference``: the server's configuration reference table (markdown),
printed or written into a document in place of its old one (``--write deploy/README.md``).

The table is made by :func:`kutnahora.server.settings.markdown_table` from the fields of
:class:`kutnahora.server.config.ServerConfig`; this command sits above both, so neither imports the other
back.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kutnahora.server.config import ServerConfig
from kutnahora.server.settings import markdown_table, replace_table


def main(argv: Sequence[str] | None = None) -> int:
    """Print the configuration reference table, or write it into a document in place of its old one."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.server.config_reference",
        description="Print the server's configuration reference table (markdown), or write it into a file.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--write", metavar="FILE", default="", help="replace the table in FILE (none: print)")
    args = parser.parse_args(argv)
    table = markdown_table(ServerConfig)
    if not args.write:
        sys.stdout.write(table)
        return 0
    path = Path(args.write)
    path.write_text(replace_table(path.read_text(encoding="utf-8"), table), encoding="utf-8")
    print(f"wrote the configuration reference into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
