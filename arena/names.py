"""Bot names: what a registration may ask for.

A name is 1 to :data:`MAX_LENGTH` characters of ASCII letters, digits, ``-``, ``_`` and ``.``, starting
with a letter or digit, so that it reads the same in every log, terminal and URL (no control characters,
no look-alike letters, no spaces). Names that start with ``house-`` belong to the arena's own bots.
"""

from __future__ import annotations

import re

MAX_LENGTH = 40
HOUSE_PREFIX = "house-"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be registered, as a sentence, or None when it can."""
    if not name:
        return "a bot name must not be empty"
    if len(name) > MAX_LENGTH:
        return f"a bot name has at most {MAX_LENGTH} characters, not {len(name)}"
    if not _NAME.fullmatch(name):
        return (
            "a bot name is made of ASCII letters, digits, '-', '_' and '.', starting with a letter or a "
            "digit (no spaces or control characters)"
        )
    if name.lower().startswith(HOUSE_PREFIX):
        return f"names starting with {HOUSE_PREFIX!r} are kept for the arena's house bots"
    return None
