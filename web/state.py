"""What the web application's routes share: :class:`Web`, the game server's connection and components,
the bots, the tournament shown and the tournament games being played again."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from kutnahora.clients.render import Names
from kutnahora.clients.sdk import Client, ClientError
from kutnahora.web import wire
from kutnahora.web.bots import BotPlayers
from kutnahora.web.connection import Connection
from kutnahora.web.limits import Limits, VisitorLimits
from kutnahora.web.standings import Tournament


@dataclass
class Web:
    """What the routes share: the game server's connection, its components, the bots, the tournament.

    The components are read on each new connection (:meth:`connected`); until the first, the routes that
    need them or the game server answer "game server unavailable" (503).
    """

    connection: Connection
    bots: BotPlayers
    limits: VisitorLimits = field(default_factory=lambda: VisitorLimits(Limits.off()))
    names: Names | None = None
    components: dict[str, Any] | None = None
    tournament: Tournament | None = None
    results: Path | None = None
    tls: bool = False
    ca_cert: str | None = None
    quota_token: str | None = None  # the game server's --quota-token, sent with the games created here
    lobby_cache: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    replayed: dict[str, asyncio.Task[str]] = field(default_factory=dict)

    @property
    def client(self) -> Client:
        """The game server's client; a ClientError (UNAVAILABLE) while it cannot be reached."""
        return self.connection.client

    @property
    def address(self) -> str:
        return self.connection.address

    def component_names(self) -> Names:
        """The component set's names; unavailable until the game server was first reached."""
        self.connection.client  # noqa: B018  (raises "unavailable" while there is no connection)
        if self.names is None:
            raise ClientError("The game server's components are not read yet.", grpc.StatusCode.UNAVAILABLE)
        return self.names

    async def connected(self, client: Client) -> None:
        """Read the components of a newly connected game server."""
        component_set = await client.components()
        self.names = Names(component_set)
        self.components = {**wire.to_json(component_set), "words": wire.words(self.names)}
