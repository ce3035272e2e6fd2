"""Clients of the Kutná Hora game server: the SDK, the reference bots, the human client, the tournament.

Everything here talks to the server over gRPC only (``kutnahora.v1``), never to the rules engine, so a
bot written with this SDK sees exactly what a bot in any other language sees.

A bot is one class with one method::

    from kutnahora.clients import Bot

    class FirstOption(Bot):
        def choose(self, observation):
            return observation.pending.options[0]

See :mod:`kutnahora.clients.sdk` for connecting, creating and joining games and the play loop.
"""

from kutnahora.clients.sdk import (
    Bot,
    Choice,
    Client,
    ClientError,
    ConnectError,
    GameInfo,
    GameOutcome,
    InvalidChoice,
    SeatCredentials,
)

__all__ = [
    "Bot",
    "Choice",
    "Client",
    "ClientError",
    "ConnectError",
    "GameInfo",
    "GameOutcome",
    "InvalidChoice",
    "SeatCredentials",
]
