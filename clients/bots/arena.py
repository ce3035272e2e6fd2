"""Playing rated games in an arena: register once, then seek, play, and seek again.

:func:`play_rated` runs one loop per pool: seek a game in the pool (the arena's ``Seek`` stream), play the
matched seat on the game server the arena names (``Client.play``), and seek again, until ``games`` games
of each pool are played (0: until stopped). Beside the seeking it keeps the arena's ``StreamEvents`` stream
open (:class:`Verdicts`): when the arena reports a game abandoned (its game server lost), the bot leaves
that game at once and seeks again, and each rated result is printed with the rating change. A dropped
arena connection is retried with a growing pause, and so is a pool where another process of the same account
holds the ticket (``ALREADY_EXISTS``: said once, in one sentence; the games in play go on); a refusal by
the arena's per-caller limits (``RESOURCE_EXHAUSTED`` with a RetryInfo) is waited out for its delay, seeking
and the event stream alike; any other refusal (a revoked key, an unknown pool) ends the loop with its
message.

Every call to the arena carries the bot's API key: off this machine it must travel over TLS
(:func:`add_tls_options`: ``--tls``, ``--ca-cert``). The game servers the arena names are reached as the
arena itself reaches them, in plain gRPC: the address is the one it places the game with.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
from rich.console import Console

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import (
    ENV_CA_CERT,
    ENV_TLS,
    Bot,
    Client,
    ClientError,
    ConnectError,
    GameOutcome,
    refusal_wait,
)
from kutnahora.v1 import arena_service_pb2, game_pb2

ENV_ARENA_KEY = "KUTNAHORA_ARENA_KEY"
GAME_LOST_CODES = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.CANCELLED,
)
"""Codes of a game server that went away (or restarted without the game) while the bot played on it."""
HELD_ELSEWHERE_BACKOFF = (1.0, 30.0)
"""The first and the longest pause before seeking again in a pool where another process of the same
account holds the ticket (the arena refuses with ALREADY_EXISTS)."""
RULING_WAIT = 10.0
"""Seconds ``play_rated`` waits at its end for the arena to rate the games it played (it rates a game
within its ``--poll`` seconds, 2 by default, of its end)."""


def read_key(key_file: str | None) -> str | None:
    """The API key from ``key_file`` (its first line), else from ``$KUTNAHORA_ARENA_KEY``."""
    if key_file:
        try:
            return Path(key_file).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None
    return os.environ.get(ENV_ARENA_KEY) or None


def write_key(key_file: str, key: str) -> None:
    """Write a new key file readable only by its owner; ``FileExistsError`` if the file exists (the arena
    shows a key once, so a file that may hold one is never overwritten)."""
    descriptor = os.open(Path(key_file), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")


ARENA_TLS_HELP = (
    "connect to the arena over TLS, as an arena off this machine needs (the API key travels with every call)"
)


def add_tls_options(parser: argparse.ArgumentParser, tls_help: str = ARENA_TLS_HELP) -> None:
    """``--tls`` (its help ``tls_help``) and ``--ca-cert``, their defaults ``$KUTNAHORA_TLS`` and
    ``$KUTNAHORA_CA_CERT``."""
    parser.add_argument(
        "--tls",
        action="store_true",
        default=os.environ.get(ENV_TLS, "") not in ("", "0"),
        help=f"{tls_help} (default: ${ENV_TLS})",
    )
    parser.add_argument(
        "--ca-cert",
        default=os.environ.get(ENV_CA_CERT) or None,
        help=f"PEM file of the CA to trust (TLS; without it the system's CAs; default: ${ENV_CA_CERT})",
    )


async def register(
    address: str,
    name: str,
    key_file: str,
    admin_token: str | None = None,
    *,
    tls: bool = False,
    ca_cert: str | None = None,
) -> str:
    """Register ``name`` with the arena (over TLS with ``tls`` or ``ca_cert``) and write its key to
    ``key_file``; returns the key."""
    async with await ArenaClient.connect(address, tls=tls, ca_cert=ca_cert) as arena:
        key = await arena.register_bot(name, admin_token=admin_token)
    write_key(key_file, key)
    return str(key)


class Verdicts:
    """The arena's word on a bot's games, read from its ``StreamEvents`` stream: which were abandoned.

    :meth:`run` keeps the stream open (opening it again after a dropped connection) and hands every
    message to ``on_event``; :meth:`abandoned` is a future that the arena's ``abandoned`` message for that
    game resolves. An arena without the stream (an older one) leaves every future unresolved.
    """

    def __init__(
        self,
        arena: ArenaClient,
        key: str,
        on_event: Callable[[arena_service_pb2.StreamEventsResponse], None] | None = None,
    ) -> None:
        self.arena = arena
        self.key = key
        self.on_event = on_event
        self.opened = asyncio.Event()
        self.working = True
        self._told: dict[str, asyncio.Future[arena_service_pb2.BotGameAbandoned]] = {}
        self._ruled: set[str] = set()  # games the arena rated or abandoned
        self._ruling = asyncio.Event()

    def abandoned(self, game_id: str) -> asyncio.Future[arena_service_pb2.BotGameAbandoned]:
        """Resolved with the arena's ``BotGameAbandoned`` message if it abandons the game."""
        if game_id not in self._told:
            self._told[game_id] = asyncio.get_running_loop().create_future()
        return self._told[game_id]

    def forget(self, game_id: str) -> None:
        """Stop following a game (played to its end, or given up)."""
        self._told.pop(game_id, None)

    async def wait_ruled(self, game_ids: Sequence[str], timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until the arena has rated or abandoned every one of these
        games, so that their events have been heard."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.working and not set(game_ids) <= self._ruled:
            self._ruling.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ruling.wait(), max(0.0, deadline - loop.time()))
            if loop.time() >= deadline:
                return

    async def run(self) -> None:
        """Follow the events until cancelled; a refusal other than a dropped connection ends it quietly
        (the bot then learns of a lost game through its Play stream only)."""
        delay = 0.5
        while True:
            try:
                async for message in self.arena.events(self.key, opened=self.opened):
                    delay = 0.5
                    if self.on_event is not None:
                        self.on_event(message)
                    which = message.WhichOneof("event")
                    if which in ("finished", "abandoned"):
                        self._ruled.add(getattr(message, which).game_id)
                        self._ruling.set()
                    if message.HasField("abandoned"):
                        told = self.abandoned(message.abandoned.game_id)
                        if not told.done():
                            told.set_result(message.abandoned)
            except ClientError as error:
                if await waited_out(error):
                    continue  # the arena's per-caller limits: its RetryInfo's delay has passed
                if error.code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, None):
                    self.working = False
                    self.opened.set()  # seeking need not wait for a stream this arena refuses
                    self._ruling.set()
                    return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


async def waited_out(error: ClientError) -> bool:
    """For a refusal by the arena's per-caller limits (:func:`~kutnahora.clients.sdk.refusal_wait`), wait
    its delay and say True; False for any other error."""
    wait = refusal_wait(error)
    if wait is None:
        return False
    await asyncio.sleep(wait)
    return True


def describe_event(message: arena_service_pb2.StreamEventsResponse) -> str | None:
    """One line saying what a ``finished`` or ``abandoned`` event means (None for the others)."""
    if message.HasField("finished"):
        done = message.finished
        before, after = done.rating_before, done.rating_after
        return (
            f"pool {done.pool}: {done.game_id} rated, place {done.place}: "
            f"μ {before.mu:.2f} → {after.mu:.2f}, conservative {after.conservative:+.2f} "
            f"({after.conservative - before.conservative:+.2f})"
        )
    if message.HasField("abandoned"):
        lost = message.abandoned
        return f"pool {lost.pool}: {lost.game_id} abandoned, not rated: {lost.message}"
    return None


async def play_rated(
    address: str,
    key: str,
    pools: Sequence[str],
    games: int,
    make_bot: Callable[[], Bot],
    console: Console,
    *,
    quiet: bool = False,
    on_event: Callable[[arena_service_pb2.StreamEventsResponse], None] | None = None,
    tls: bool = False,
    ca_cert: str | None = None,
) -> list[GameOutcome]:
    """Play ``games`` rated games in each pool (0: forever); returns the outcomes of the games played to
    their end. A game the arena reports abandoned (its game server lost) is left at once, and the bot seeks
    again; ``on_event`` hears every message of the bot's event stream. With ``tls`` or ``ca_cert`` (the PEM
    file of the CA to trust) the bot speaks TLS to the arena; the game servers it names are reached in
    plain gRPC, as the arena reaches them."""
    clients: dict[str, Client] = {}
    outcomes: list[GameOutcome] = []
    lock = asyncio.Lock()

    async def client_for(server: str) -> Client:
        async with lock:
            if server not in clients:
                clients[server] = Client(server)
            return clients[server]

    def heard(message: arena_service_pb2.StreamEventsResponse) -> None:
        if on_event is not None:
            on_event(message)
        line = describe_event(message)
        if line is not None and not quiet:
            console.print(line)

    async def one_pool(arena: ArenaClient, verdicts: Verdicts, pool: str) -> None:
        played = 0
        delay = 0.5
        held_elsewhere = 0.0  # seconds to wait before seeking again while another process holds the ticket
        while games == 0 or played < games:
            try:
                seat = await arena.seek(key, pool)
            except ClientError as error:
                if error.code == grpc.StatusCode.ALREADY_EXISTS:
                    # Another process of this account seeks in the pool: not this bot's fault, nor a
                    # reason to drop the games it plays in other pools. Wait, longer each time, and seek
                    # again.
                    if not held_elsewhere and not quiet:
                        first, longest = HELD_ELSEWHERE_BACKOFF
                        console.print(
                            f"pool {pool}: another process of this bot already seeks here "
                            f"({error.reason or error.code.name}), so this one seeks again every {first:g} "
                            f"to {longest:g} s until that ticket is gone, and plays on meanwhile."
                        )
                    held_elsewhere = min(
                        max(held_elsewhere * 2, HELD_ELSEWHERE_BACKOFF[0]), HELD_ELSEWHERE_BACKOFF[1]
                    )
                    await asyncio.sleep(held_elsewhere)
                    continue
                if await waited_out(error):
                    continue  # over the arena's per-caller limits: seek again once its delay has passed
                if error.code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, None):
                    raise
                await asyncio.sleep(delay)  # the arena restarts, or the connection dropped: seek again
                delay = min(delay * 2, 5.0)
                continue
            delay = 0.5
            held_elsewhere = 0.0
            game_id = seat.seat.game_id
            client = await client_for(seat.server_address)
            play = asyncio.ensure_future(client.play(make_bot(), seat.seat))
            told = verdicts.abandoned(game_id)
            try:
                waits: set[asyncio.Future[Any]] = {play, told}
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                verdicts.forget(game_id)
                if not play.done():
                    play.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ClientError):
                        await play
            if play.cancelled():
                continue  # the arena abandoned the game (the event was printed): seek again
            try:
                outcome = play.result()
            except ClientError as error:
                if not isinstance(error, ConnectError) and error.code not in GAME_LOST_CODES:
                    raise
                if not quiet:
                    console.print(f"pool {pool}: {game_id} given up: {error} Seeking again.")
                continue  # the arena rules on the game (unrated) before matching the bot again in this pool
            if outcome.status != game_pb2.GAME_STATUS_FINISHED:
                continue  # abandoned on the game server: not rated, not counted
            played += 1
            outcomes.append(outcome)
            if not quiet:
                place = "won" if outcome.won else f"score {outcome.score}"
                opponents = ", ".join(n for i, n in enumerate(seat.seat_names) if i != seat.seat.seat)
                total = f"/{games}" if games else ""
                console.print(
                    f"pool {pool} game {played}{total}: {game_id} seat {seat.seat.seat} "
                    f"vs {opponents}: {place}"
                )

    try:
        async with await ArenaClient.connect(address, tls=tls, ca_cert=ca_cert) as arena:
            verdicts = Verdicts(arena, key, heard)
            following = asyncio.ensure_future(verdicts.run())
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(verdicts.opened.wait(), 5.0)
                await asyncio.gather(*(one_pool(arena, verdicts, pool) for pool in pools))
                # Hear the last results' ratings before leaving.
                await verdicts.wait_ruled([outcome.game_id for outcome in outcomes], RULING_WAIT)
            finally:
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await following
    finally:
        for client in clients.values():
            await client.close()
    return outcomes
