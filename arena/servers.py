"""The game servers the arena places games on, reached through the public protocol (the SDK's client).

:meth:`GameServers.place` asks every server for its load (``AdminService.GetServerInfo``: its waiting and
active games), creates the game with every seat named on the least-loaded server that answers, and
returns the seats' tokens; a server that refuses or cannot be reached is skipped for the next. With a
``--server-token`` (the game servers' ``--quota-token``) the games do not count against the arena's
address in the servers' per-caller quotas.
:meth:`GameServers.wait_end` follows a game with ``GameService.GetGame`` until it ends, and gives up
(the game is then not rated) when its server stays unreachable. It asks every ``poll`` seconds (2), unless
told by :meth:`GameServers.check_soon` that the game has most likely ended (one of its bots seeks again in
its pool): then it asks within ``soonest`` seconds (0.5) of its last question. A crowd of long games thus
costs its game servers a quarter of the calls it did at two a second, while a bot that finished is matched
again within a tick or two, as before, and one that leaves hears its rating within ``poll`` seconds; no
game is asked about more often than every ``soonest`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf import duration_pb2

from kutnahora.arena.pools import Pool
from kutnahora.clients.sdk import Client, ClientError
from kutnahora.v1 import game_pb2

UNFINISHED = (game_pb2.GAME_STATUS_WAITING, game_pb2.GAME_STATUS_ACTIVE)

POLL_SECONDS = 2.0
"""Seconds between two questions about a game followed, while none of its bots seeks again."""
SOONEST_SECONDS = 0.5
"""The least seconds between two questions about one game, when its bots seek again."""


class PlacementFailed(Exception):
    """No game server could create the game; ``failures`` maps each tried server to its error."""

    def __init__(self, failures: dict[str, str]) -> None:
        super().__init__("; ".join(f"{server}: {error}" for server, error in failures.items()) or "no server")
        self.failures = failures


@dataclass(frozen=True, slots=True)
class Placed:
    """A game created with every seat taken."""

    server: str
    game_id: str
    seat_tokens: tuple[str, ...]


class GameServers:
    """Connections to every known game server."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        lost_after: float = 20.0,
        poll: float = POLL_SECONDS,
        soonest: float = SOONEST_SECONDS,
        quota_token: str | None = None,
    ) -> None:
        self.addresses = list(dict.fromkeys(addresses))
        self.lost_after = lost_after
        self.poll = poll
        self.soonest = min(soonest, poll)
        self.quota_token = quota_token
        self._clients: dict[str, Client] = {address: self._client(address) for address in self.addresses}
        self._in_flight: dict[str, int] = dict.fromkeys(self.addresses, 0)  # games being created on each
        self._wake: dict[str, asyncio.Event] = {}  # followed game -> set when it should be asked soon

    def _client(self, address: str) -> Client:
        # A refusal goes straight to the next server (no waiting out its RetryInfo here); the quota token,
        # when set, keeps the games of many bots from counting as one caller's on the game servers.
        return Client(address, retry_refused=False, quota_token=self.quota_token)

    async def close(self) -> None:
        """Close every connection."""
        await asyncio.gather(*(client.close() for client in self._clients.values()))

    async def load(self, address: str) -> int | None:
        """The unfinished games of one server, or None when it does not answer within 2 s."""
        try:
            info = await asyncio.wait_for(self._clients[address].server_info(), 2.0)
        except (ClientError, TimeoutError):
            return None
        return int(sum(count.count for count in info.games if count.status in UNFINISHED))

    async def by_load(self) -> list[str]:
        """The servers that answer, least loaded first (ties in the order given). A server's load counts
        the games this arena is creating on it now, so that a burst of placements, which all ask for the
        loads at the same moment, is spread over the servers instead of landing on one."""
        loads = await asyncio.gather(*(self.load(address) for address in self.addresses))
        answering = [
            (load + self._in_flight[self.addresses[index]], index)
            for index, load in enumerate(loads)
            if load is not None
        ]
        return [self.addresses[index] for _, index in sorted(answering)]

    async def place(self, pool: Pool, names: Sequence[str], label: str) -> Placed:
        """Create a game of ``pool`` with these seat names on the least-loaded server that accepts it."""
        failures: dict[str, str] = {}
        order = await self.by_load()
        for address in self.addresses:
            if address not in order:
                failures[address] = "it did not answer"
        clock = None
        if pool.decision_ms is not None and pool.bank_ms is not None:
            clock = game_pb2.ClockSettings(
                decision_time=duration_pb2.Duration(
                    seconds=pool.decision_ms // 1000, nanos=pool.decision_ms % 1000 * 1_000_000
                ),
                time_bank=duration_pb2.Duration(
                    seconds=pool.bank_ms // 1000, nanos=pool.bank_ms % 1000 * 1_000_000
                ),
            )
        for address in order:
            self._in_flight[address] += 1
            try:
                created, seats = await self._clients[address].create_seated_game(
                    names, clock=clock, label=label
                )
            except ClientError as error:
                failures[address] = str(error)
                continue
            finally:
                self._in_flight[address] -= 1
            return Placed(address, created.game.game_id, tuple(seat.token for seat in seats))
        raise PlacementFailed(failures)

    def check_soon(self, game_id: str) -> None:
        """Have a game followed by :meth:`wait_end` asked about within ``soonest`` seconds of the last
        question rather than at the next ``poll`` (its bots seek again: it has most likely ended). Nothing
        happens for a game not followed here."""
        wake = self._wake.get(game_id)
        if wake is not None:
            wake.set()

    async def wait_end(self, address: str, game_id: str) -> game_pb2.GameSummary | None:
        """The game's summary once it has ended, or None when its server was unreachable (or did not know
        the game) for ``lost_after`` seconds."""
        client = self._clients.get(address)
        if client is None:
            client = self._clients[address] = self._client(address)
        wake = self._wake[game_id] = asyncio.Event()
        unreachable_since: float | None = None
        try:
            while True:
                wake.clear()  # a check_soon from here on is for the next question
                asked = time.monotonic()
                try:
                    summary = await client.get_game(game_id)
                except ClientError:
                    unreachable_since = unreachable_since or asked
                    if time.monotonic() - unreachable_since > self.lost_after:
                        return None
                else:
                    unreachable_since = None
                    if summary.status not in UNFINISHED:
                        return summary
                next_at = asked + self.poll
                if unreachable_since is not None:  # decided as soon as lost_after has passed
                    next_at = min(next_at, unreachable_since + self.lost_after + self.soonest)
                await self._pause(wake, asked, next_at)
        finally:
            if self._wake.get(game_id) is wake:
                del self._wake[game_id]

    async def _pause(self, wake: asyncio.Event, asked: float, next_at: float) -> None:
        """Wait until ``next_at``, or until ``wake`` is set but not before ``soonest`` after ``asked``."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), max(0.0, next_at - time.monotonic()))
        await asyncio.sleep(max(0.0, min(asked + self.soonest, next_at) - time.monotonic()))
