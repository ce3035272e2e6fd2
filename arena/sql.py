"""Statement text for both of the arena's databases: one text serves SQLite and PostgreSQL, its ``?``
marks becoming ``%s`` for PostgreSQL. Every table's statements (accounts, placements, tickets, standings,
events, profiles) go through :meth:`Sql.execute` on the connection of the store's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Sql:
    """How statements are written for one database."""

    postgres: bool

    def text(self, statement: str) -> str:
        """The statement as this database reads it."""
        return statement.replace("?", "%s") if self.postgres else statement

    def execute(self, conn: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement on ``conn`` (in the caller's transaction); the cursor."""
        return conn.execute(self.text(statement), tuple(params))
