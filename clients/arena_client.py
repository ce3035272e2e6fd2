"""The Python client of a Kutná Hora arena (``kutnahora-arena``): register a bot, rotate or revoke its key,
seek rated games, follow the bot's game events, read pools, leaderboards and profiles.

The arena only matches: a seat it matches a bot into (:class:`ArenaSeat`) is played on a game server
with the game client, :class:`kutnahora.clients.sdk.Client`, whose connection options, refusals
(:class:`~kutnahora.clients.sdk.ClientError`) and call wrapper this client shares.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import grpc
import grpc.aio

from kutnahora.clients.sdk import (
    Client,
    ClientError,
    SeatCredentials,
    channel_options,
    open_channel,
    read_ca_cert,
    rpc_error,
    wait_connected,
)
from kutnahora.v1 import arena_service_pb2, arena_service_pb2_grpc


@dataclass(frozen=True, slots=True)
class ArenaSeat:
    """A seat the arena matched a bot into: the game server to play on and the seat's credentials."""

    pool: str
    server_address: str
    seat: SeatCredentials
    seat_names: tuple[str, ...]


class ArenaClient:
    """A connection to a Kutná Hora arena (``kutnahora-arena``): register, seek games, read ratings.

    Calls that act for a bot take its API key, sent as ``authorization: Bearer <key>``; keep it out of
    logs. A matched seat is played with a :class:`Client` connected to ``ArenaSeat.server_address``.
    """

    def __init__(
        self,
        address: str,
        *,
        tls: bool = False,
        root_certificates: bytes | None = None,
        server_name: str | None = None,
    ) -> None:
        """Over TLS with ``tls`` or ``root_certificates`` (the PEM CA to trust; None: the system's), as
        :class:`Client`; plain otherwise, which is only for an arena on this machine: the API key travels
        in every call's metadata."""
        self.address = address
        self.tls = tls or root_certificates is not None
        self._channel = open_channel(
            address, channel_options(), tls=tls, root_certificates=root_certificates, server_name=server_name
        )
        module: Any = arena_service_pb2_grpc  # the generated stubs are untyped
        self._arena: Any = module.ArenaServiceStub(self._channel)

    @classmethod
    async def connect(
        cls,
        address: str,
        *,
        tls: bool = False,
        ca_cert: str | None = None,
        server_name: str | None = None,
        timeout: float = 5.0,
    ) -> Self:
        """Open a connection (over TLS with ``tls`` or ``ca_cert``, the PEM file of the CA to trust) and wait
        until the arena answers; :class:`ConnectError` as soon as the connection fails (saying why: a plain
        connection to an arena serving TLS is closed at once, a certificate may not be trusted), or after
        ``timeout`` seconds without an answer."""
        client = cls(address, tls=tls, root_certificates=read_ca_cert(ca_cert), server_name=server_name)
        try:
            await wait_connected(client._channel, address, "the arena", timeout, tls=client.tls)
        except BaseException:
            await client.close()
            raise
        return client

    async def close(self) -> None:
        """Close the connection; an open Seek ends, withdrawing its ticket."""
        await self._channel.close(grace=None)

    async def __aenter__(self) -> ArenaClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    @staticmethod
    def _auth(secret: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {secret}"),)

    async def register_bot(self, name: str, *, admin_token: str | None = None) -> str:
        """Register a bot and return its API key (shown only this once)."""
        metadata = self._auth(admin_token) if admin_token else ()
        response = await Client._call(
            self._arena.RegisterBot(arena_service_pb2.RegisterBotRequest(name=name), metadata=metadata),
            f"registering bot {name!r}",
            arena_service_pb2.RegisterBotResponse,
        )
        return str(response.api_key)

    async def rotate_key(self, api_key: str) -> str:
        """Replace the bot's key; returns the new one (the old one stops working)."""
        response = await Client._call(
            self._arena.RotateKey(arena_service_pb2.RotateKeyRequest(), metadata=self._auth(api_key)),
            "rotating the API key",
            arena_service_pb2.RotateKeyResponse,
        )
        return str(response.api_key)

    async def revoke_key(self, secret: str, name: str = "") -> None:
        """Revoke the key ``secret`` (a bot's own), or with the admin token as ``secret`` the named bot's."""
        await Client._call(
            self._arena.RevokeKey(arena_service_pb2.RevokeKeyRequest(name=name), metadata=self._auth(secret)),
            "revoking an API key",
            arena_service_pb2.RevokeKeyResponse,
        )

    async def seek_updates(self, api_key: str, pool: str) -> AsyncIterator[arena_service_pb2.SeekResponse]:
        """The messages of a Seek stream (``kutnahora.v1.SeekResponse``); closing it withdraws the ticket."""
        call = self._arena.Seek(arena_service_pb2.SeekRequest(pool=pool), metadata=self._auth(api_key))
        try:
            async for message in call:
                yield message
        except grpc.aio.AioRpcError as error:
            raise rpc_error(error, f"seeking a game in pool {pool!r}") from None
        finally:
            call.cancel()

    async def seek(
        self,
        api_key: str,
        pool: str,
        on_waiting: Callable[[arena_service_pb2.SeekWaiting], None] | None = None,
    ) -> ArenaSeat:
        """Seek a game in ``pool`` until matched; ``on_waiting(SeekWaiting)`` hears each status message."""
        async for message in self.seek_updates(api_key, pool):
            if message.HasField("matched"):
                matched = message.matched
                credentials = SeatCredentials(matched.game_id, matched.seat, matched.seat_token)
                return ArenaSeat(matched.pool, matched.server_address, credentials, tuple(matched.seat_names))
            if on_waiting is not None:
                on_waiting(message.waiting)
        raise ClientError(
            f"seeking a game in pool {pool!r} failed: the arena ended the stream without a match."
        )

    async def events(
        self, api_key: str, *, opened: asyncio.Event | None = None
    ) -> AsyncIterator[arena_service_pb2.StreamEventsResponse]:
        """The bot's game events (``kutnahora.v1.StreamEventsResponse``): a ``started`` message for each game
        it plays now, then one as each of its games starts, finishes (``finished``: its place and rating
        before and after) or is abandoned (``abandoned``: not rated, with the cause). It does not end by
        itself; a dropped connection raises :class:`ClientError` (open it again to go on). ``opened`` is
        set once the arena has accepted the stream: no event after that is missed."""
        call = self._arena.StreamEvents(arena_service_pb2.StreamEventsRequest(), metadata=self._auth(api_key))
        try:
            if opened is not None:
                await call.initial_metadata()
                if not call.done():  # a refusal ends the call at once, and is raised below
                    opened.set()
            async for message in call:
                yield message
        except grpc.aio.AioRpcError as error:
            raise rpc_error(error, "following the bot's game events") from None
        finally:
            call.cancel()

    async def pools(self) -> list[arena_service_pb2.Pool]:
        """The arena's pools (``kutnahora.v1.Pool``)."""
        response = await Client._call(
            self._arena.ListPools(arena_service_pb2.ListPoolsRequest()),
            "listing the pools",
            arena_service_pb2.ListPoolsResponse,
        )
        return list(response.pools)

    async def leaderboard(
        self, pool: str, page: int = 0, page_size: int = 50
    ) -> arena_service_pb2.GetLeaderboardResponse:
        """One page of a pool's leaderboard (``kutnahora.v1.GetLeaderboardResponse``)."""
        request = arena_service_pb2.GetLeaderboardRequest(pool=pool, page=page, page_size=page_size)
        return await Client._call(
            self._arena.GetLeaderboard(request),
            f"reading the leaderboard of pool {pool!r}",
            arena_service_pb2.GetLeaderboardResponse,
        )

    async def bot_profile(self, name: str) -> arena_service_pb2.GetBotProfileResponse:
        """A bot's ratings, history and recent games (``kutnahora.v1.GetBotProfileResponse``)."""
        return await Client._call(
            self._arena.GetBotProfile(arena_service_pb2.GetBotProfileRequest(name=name)),
            f"reading the profile of bot {name!r}",
            arena_service_pb2.GetBotProfileResponse,
        )

    async def submit_bot(
        self, api_key: str, archive: bytes, pools: Sequence[str] = (), *, timeout: float | None = None
    ) -> arena_service_pb2.SubmitBotResponse:
        """Upload the bot's hosted code (a packed submission folder) to be played in ``pools`` (none: every
        pool); the version kept (``kutnahora.v1.SubmitBotResponse``: an existing one when the same archive
        was submitted before). ``timeout``: seconds to wait (None: no bound), as for the calls below."""
        request = arena_service_pb2.SubmitBotRequest(archive=archive, pools=list(pools))
        return await Client._call(
            self._arena.SubmitBot(request, metadata=self._auth(api_key), timeout=timeout),
            "submitting the bot's code",
            arena_service_pb2.SubmitBotResponse,
        )

    async def submissions(
        self, api_key: str, *, timeout: float | None = None
    ) -> arena_service_pb2.ListSubmissionsResponse:
        """The bot's hosted versions, newest first, and whether its hosted play is paused
        (``kutnahora.v1.ListSubmissionsResponse``)."""
        return await Client._call(
            self._arena.ListSubmissions(
                arena_service_pb2.ListSubmissionsRequest(), metadata=self._auth(api_key), timeout=timeout
            ),
            "listing the bot's submissions",
            arena_service_pb2.ListSubmissionsResponse,
        )

    async def submission(
        self, api_key: str, version: int, *, timeout: float | None = None
    ) -> arena_service_pb2.GetSubmissionResponse:
        """One of the bot's versions with its build log (``kutnahora.v1.GetSubmissionResponse``)."""
        return await Client._call(
            self._arena.GetSubmission(
                arena_service_pb2.GetSubmissionRequest(version=version),
                metadata=self._auth(api_key),
                timeout=timeout,
            ),
            f"reading version {version} of the bot",
            arena_service_pb2.GetSubmissionResponse,
        )

    async def seat_log(
        self, api_key: str, game_id: str, *, timeout: float | None = None
    ) -> arena_service_pb2.GetSeatLogResponse:
        """What the bot's hosted code wrote while it played its seat of ``game_id``."""
        return await Client._call(
            self._arena.GetSeatLog(
                arena_service_pb2.GetSeatLogRequest(game_id=game_id),
                metadata=self._auth(api_key),
                timeout=timeout,
            ),
            f"reading the bot's log of game {game_id}",
            arena_service_pb2.GetSeatLogResponse,
        )

    async def set_hosting(self, api_key: str, *, paused: bool, timeout: float | None = None) -> bool:
        """Pause or resume the bot's hosted play; whether it is paused now."""
        response = await Client._call(
            self._arena.SetHosting(
                arena_service_pb2.SetHostingRequest(paused=paused),
                metadata=self._auth(api_key),
                timeout=timeout,
            ),
            "pausing the bot's hosted play" if paused else "resuming the bot's hosted play",
            arena_service_pb2.SetHostingResponse,
        )
        return bool(response.paused)
