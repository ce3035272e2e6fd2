"""The Python SDK for Kutná Hora bots: connect, create or join a game, and play a seat to its end.

A bot is one class with one method, :meth:`Bot.choose`, which receives the seat's observation (a
``kutnahora.v1.Observation`` whose ``pending.options`` lists every legal answer) and returns one of those
options, or its index, or its canonical text. :meth:`Client.play` runs the loop over the bidirectional
``PlayService.Play`` stream: receive an observation, ask the bot, send the answer with the state version
it answers. The loop

- re-reads the game and chooses again when the server refuses an answer as stale (the seat's clock ran
  out and the server moved on, for example), and never answers one version twice;
- reopens the stream after a dropped connection, for up to ``reconnect_for`` seconds, and carries on
  from whatever the game is waiting for;
- ends when the server says the game has ended, returning a :class:`GameOutcome`.

Everything goes through the protocol (``kutnahora.v1``); nothing here knows the rules. The module leaves
choosing to the bots (:mod:`kutnahora.clients.bots`), drawing to :mod:`kutnahora.clients.render`,
scheduling many games to :mod:`kutnahora.clients.tournament`, and the arena's accounts and rated games to
its own client, :mod:`kutnahora.clients.arena_client`.

Example::

    import asyncio
    from kutnahora.clients import Bot, Client

    class FirstOption(Bot):
        def choose(self, observation):
            return observation.pending.options[0]

    async def main() -> None:
        async with await Client.connect("localhost:50051") as client:
            game = await client.create_game(players=2)
            seats = [await client.join_game(game.game.game_id) for _ in range(2)]
            outcomes = await asyncio.gather(*(client.play(FirstOption(), s) for s in seats))
            print([o.score for o in outcomes])

    asyncio.run(main())
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import inspect
import logging
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Self, TypeAlias, TypeVar, cast

import grpc
import grpc.aio
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from kutnahora.v1 import (
    admin_service_pb2,
    admin_service_pb2_grpc,
    common_pb2,
    components_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    play_service_pb2,
    play_service_pb2_grpc,
    replay_service_pb2,
    replay_service_pb2_grpc,
)
from kutnahora.v1.game_pb2 import LegalOption, Observation

log = logging.getLogger(__name__)

Response = TypeVar("Response")

Choice: TypeAlias = "LegalOption | int | str"
"""What :meth:`Bot.choose` returns: a listed option, its index, or its canonical text (``play 2 mine``)."""

ENV_SERVER: Final = "KUTNAHORA_SERVER"
ENV_GAME_ID: Final = "KUTNAHORA_GAME_ID"
ENV_SEAT: Final = "KUTNAHORA_SEAT"
ENV_TOKEN: Final = "KUTNAHORA_TOKEN"
ENV_TLS: Final = "KUTNAHORA_TLS"
ENV_CA_CERT: Final = "KUTNAHORA_CA_CERT"
"""Environment variables through which a runner hands a seat to an external bot (see
docs/bots.md#write-a-bot-in-any-language)."""

# A dropped connection shows as one of these; the play loop reopens its stream after them.
RETRYABLE_CODES: Final = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.CANCELLED,
    }
)

# A call that failed with one of these may not have reached the server, or its reply was lost: the
# mutating calls (create, join, resign) are sent again with the same request_id, which the server answers
# with the first answer instead of doing the change twice.
TRANSIENT_CODES: Final = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
QUOTA_KEY: Final = "kutnahora-quota-token"
"""The metadata entry that carries a client's quota token beside a seat's token (the server's
``kutnahora.plumbing.auth.QUOTA_KEY``)."""

RETRY_FOR: Final = 30.0
"""Seconds during which :class:`Client` retries a mutating call after transient failures, by default."""
RETRY_FIRST_DELAY: Final = 0.2
RETRY_MAX_DELAY: Final = 5.0

_STATUS_NAMES: Final[dict[int, str]] = {
    game_pb2.GAME_STATUS_WAITING: "waiting",
    game_pb2.GAME_STATUS_ACTIVE: "active",
    game_pb2.GAME_STATUS_FINISHED: "finished",
    game_pb2.GAME_STATUS_ABANDONED: "abandoned",
}

# Which indicator arm prices each commodity (002 · Prices); silver and ore share one.
ARM_OF: dict[int, int] = {
    common_pb2.COMMODITY_WOOD: common_pb2.ARM_WOOD,
    common_pb2.COMMODITY_FOOD: common_pb2.ARM_FOOD,
    common_pb2.COMMODITY_BEER: common_pb2.ARM_BEER,
    common_pb2.COMMODITY_SILVER: common_pb2.ARM_SILVER_ORE,
    common_pb2.COMMODITY_ORE: common_pb2.ARM_SILVER_ORE,
    common_pb2.COMMODITY_PERMITS: common_pb2.ARM_PERMITS,
}


def status_name(status: int) -> str:
    """The lower-case name of a ``GameStatus`` value (``finished``, ``abandoned``, ...)."""
    return _STATUS_NAMES.get(status, "unknown")


class ClientError(Exception):
    """A request failed; the message is one sentence meant for a person.

    ``reason`` says why in a form a program can act on: the name of the server's ``RejectReason`` without
    its prefix (``NOT_YOUR_TURN``, ``SEAT_TAKEN``, ``LIMIT_REACHED``, ...), read from the
    ``google.rpc.ErrorInfo`` in the status details; None when the failure carried none (the server was
    unreachable, or the status came from gRPC itself). ``metadata`` is the ErrorInfo's metadata.
    ``retry_after`` is the delay in seconds of a ``google.rpc.RetryInfo`` in the details (a quota, a rate
    limit or an overloaded server says when to ask again), else None.
    """

    def __init__(
        self,
        message: str,
        code: grpc.StatusCode | None = None,
        reason: str | None = None,
        metadata: dict[str, str] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.metadata = metadata or {}
        self.retry_after = retry_after


class ConnectError(ClientError):
    """The server cannot be reached."""


class InvalidChoice(ClientError):
    """A bot returned something that is not one of the listed options."""


ERROR_DOMAIN: Final = "kutnahora.v1"


def _status_details(error: grpc.aio.AioRpcError) -> Sequence[Any]:
    """The ``google.rpc.Status`` details of a failed call (none when it carries no valid status)."""
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]  # an AioRpcError reads the same
    except ValueError:  # details that contradict the call's status: not the server's
        return ()
    return () if status is None else status.details


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    """The ``google.rpc.ErrorInfo`` a refusal of the Kutná Hora server carries in its status details."""
    for detail in _status_details(error):
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info) and info.domain == ERROR_DOMAIN:
            return info
    return None


def retry_delay(error: grpc.aio.AioRpcError) -> float | None:
    """The seconds a ``google.rpc.RetryInfo`` in the status details asks the caller to wait, or None."""
    for detail in _status_details(error):
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(retry):
            return max(0.0, float(retry.retry_delay.ToTimedelta().total_seconds()))
    return None


def refusal_wait(error: ClientError) -> float | None:
    """For a RESOURCE_EXHAUSTED refusal carrying a RetryInfo (a quota, a rate limit, an overloaded server),
    the seconds to wait before asking again: its delay and a little more, at random, so that callers
    refused together do not come back together; None for any other error."""
    if error.code is not grpc.StatusCode.RESOURCE_EXHAUSTED or error.retry_after is None:
        return None
    return error.retry_after * random.uniform(1.0, 1.2)


def rpc_error(error: grpc.aio.AioRpcError, doing: str) -> ClientError:
    """Turn a gRPC error into a :class:`ClientError` whose message says what failed and why."""
    code = error.code()
    details = error.details() or code.name
    info = error_info(error)
    reason = info.reason if info is not None else None
    metadata = dict(info.metadata) if info is not None else {}
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return ConnectError(f"{doing} failed: the server is unavailable ({details}).", code, reason, metadata)
    after = retry_delay(error)
    return ClientError(f"{doing} failed: {details} ({code.name}).", code, reason, metadata, after)


@dataclass(frozen=True, slots=True)
class SeatCredentials:
    """A joined seat: the game, the seat number and its secret token (keep it out of logs)."""

    game_id: str
    seat: int
    token: str

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata that proves the seat: ``authorization: Bearer <token>``."""
        return (("authorization", f"Bearer {self.token}"),)

    def __repr__(self) -> str:
        return f"SeatCredentials(game_id={self.game_id!r}, seat={self.seat}, token=<hidden>)"


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What a bot is told before its first decision."""

    game_id: str
    seat: int
    players: int
    components: components_pb2.ComponentSet
    rules_version: int
    summary: game_pb2.GameSummary


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """How a played game ended for one seat."""

    game_id: str
    seat: int
    status: int
    result: game_pb2.GameResult | None
    observation: Observation
    decisions: int
    reconnects: int
    refused: int = 0
    """Answers the server refused (stale after a timeout, for example); each was read again."""

    @property
    def finished(self) -> bool:
        """Whether the game reached its end with a result."""
        return bool(self.status == game_pb2.GAME_STATUS_FINISHED)

    @property
    def won(self) -> bool:
        """Whether this seat is among the winners."""
        return self.result is not None and self.seat in self.result.winners

    @property
    def score(self) -> int | None:
        """This seat's final score, when the game finished."""
        if self.result is None:
            return None
        return next((s.score for s in self.result.seats if s.seat == self.seat), None)


class Bot(abc.ABC):
    """A player of one seat. Subclasses implement :meth:`choose`; the other hooks are optional.

    ``choose`` may be a plain method or a coroutine. A bot instance plays one game at a time.
    """

    name: str = "bot"

    def start(self, game: GameInfo) -> None:  # noqa: B027 - an optional hook, empty on purpose
        """Called once before the first decision, with the game's component set."""

    @abc.abstractmethod
    def choose(self, observation: Observation) -> Choice | Awaitable[Choice]:
        """Return one of ``observation.pending.options`` (the option, its index or its text)."""

    def accepted(self, version: int) -> None:  # noqa: B027 - an optional hook, empty on purpose
        """Called when the server confirms that it applied this seat's answer to ``version``.

        The SDK asks the server for these confirmations (``PlayStart.acknowledge``) only for bots that
        define this method. A confirmation lost with a dropped connection is not sent again.
        """

    def refused(self, rejected: play_service_pb2.DecisionRejected) -> None:  # noqa: B027 - optional, empty
        """Called when the server refuses an answer (nothing was applied), before the loop acts on it."""

    def finish(self, outcome: GameOutcome) -> None:  # noqa: B027 - an optional hook, empty on purpose
        """Called once when the game has ended."""


def to_answer(choice: Choice, observation: Observation) -> game_pb2.Answer:
    """Check a bot's choice against the listed options and turn it into an ``Answer`` by index."""
    options = observation.pending.options
    if isinstance(choice, bool):  # a bool is an int to Python, but never a meaningful index
        raise InvalidChoice(f"the bot returned {choice!r}, which is not an option.")
    if isinstance(choice, int):
        index = choice
    elif isinstance(choice, str):
        index = next((o.index for o in options if o.text == choice.strip()), -1)
        if index < 0:
            raise InvalidChoice(f"the bot returned {choice!r}, which is not the text of a listed option.")
    elif isinstance(choice, LegalOption):
        index = choice.index
        if not 0 <= index < len(options) or options[index] != choice:
            raise InvalidChoice(f"the bot returned option {choice.text!r}, which is not listed now.")
    else:
        raise InvalidChoice(f"the bot returned {choice!r}; return an option, its index or its text.")
    if not 0 <= index < len(options):
        raise InvalidChoice(f"the bot chose option {index}, but only 0 to {len(options) - 1} are listed.")
    return game_pb2.Answer(option_index=index)


def channel_options() -> list[tuple[str, Any]]:
    """gRPC channel options for a client: a private connection and keepalive pings to notice drops."""
    return [
        # Each Client gets its own connection, so one game's traffic never counts against another's rate.
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ]


def read_ca_cert(ca_cert: str | None) -> bytes | None:
    """The PEM certificates of the CA to trust over TLS, read from the file ``ca_cert`` (None without one:
    the system's CAs are trusted); :class:`ConnectError` when the file cannot be read."""
    if not ca_cert:
        return None
    try:
        with open(ca_cert, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise ConnectError(f"cannot read the CA certificate {ca_cert}: {error.strerror}.") from None


def open_channel(
    address: str,
    options: list[tuple[str, Any]],
    *,
    tls: bool = False,
    root_certificates: bytes | None = None,
    server_name: str | None = None,
) -> grpc.aio.Channel:
    """A channel to ``address``: over TLS with ``tls`` or ``root_certificates`` (the PEM CA to trust; None:
    the system's), ``server_name`` overriding the name the certificate must carry; plain otherwise."""
    if tls or root_certificates is not None:
        if server_name:
            options = [*options, ("grpc.ssl_target_name_override", server_name)]
        credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
        return grpc.aio.secure_channel(address, credentials, options=options)
    return grpc.aio.insecure_channel(address, options=options)


PROBE_METHOD: Final = "/grpc.health.v1.Health/Check"
"""The call that asks a channel why it cannot connect: both services answer it, and on a channel that
cannot connect it fails at once with gRPC's reason."""


async def _connect_failure(channel: grpc.aio.Channel, timeout: float) -> str | None:
    """Why the channel cannot connect, in gRPC's words (None when it can, after all)."""
    # Bytes in and out, unparsed: an empty request asks about the whole server.
    probe = channel.unary_unary(PROBE_METHOD, request_serializer=None, response_deserializer=None)
    try:
        await probe(b"", timeout=max(timeout, 0.1))
    except grpc.aio.AioRpcError as error:
        if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return None  # an answer, whatever it says: the connection works
        details = error.details() or error.code().name
        return details.removeprefix("failed to connect to all addresses; last error: ")
    return None


def connect_problem(what: str, address: str, reason: str, *, tls: bool) -> str:
    """The sentence of a :class:`ConnectError`: ``what`` at ``address`` cannot be reached, gRPC's
    ``reason``, and what to check, which over TLS and in plain differ."""
    if tls:
        return (
            f"cannot connect to {what} at {address} over TLS ({reason}). Is it running there and serving "
            "TLS, with a certificate for that name from a CA trusted here (--ca-cert, else the system's)?"
        )
    return (
        f"cannot connect to {what} at {address} ({reason}). Is it running there? If it serves TLS, "
        "connect with TLS (--tls, and --ca-cert for a certificate from a private CA)."
    )


async def wait_connected(
    channel: grpc.aio.Channel, address: str, what: str, timeout: float, *, tls: bool
) -> None:
    """Wait until ``channel`` (to ``what`` at ``address``, ``tls`` or not) is up; :class:`ConnectError`
    as soon as a connection fails, saying why, or after ``timeout`` seconds without an answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    state = channel.get_state(try_to_connect=True)
    while state != grpc.ChannelConnectivity.READY:
        if state == grpc.ChannelConnectivity.TRANSIENT_FAILURE:
            reason = await _connect_failure(channel, min(2.0, deadline - loop.time()))
            if reason is not None:
                raise ConnectError(connect_problem(what, address, reason, tls=tls))
        remaining = deadline - loop.time()
        try:
            if remaining <= 0:
                raise TimeoutError
            await asyncio.wait_for(channel.wait_for_state_change(state), remaining)
        except TimeoutError:
            raise ConnectError(
                f"cannot connect to {what} at {address} (no answer within {timeout:g} s; is it running?)."
            ) from None
        state = channel.get_state(try_to_connect=True)


class Client:
    """A connection to a Kutná Hora server, with one method per thing a bot or a runner does."""

    def __init__(
        self,
        address: str,
        *,
        tls: bool = False,
        root_certificates: bytes | None = None,
        server_name: str | None = None,
        retry_for: float = RETRY_FOR,
        retry_refused: bool = True,
        quota_token: str | None = None,
    ) -> None:
        """``retry_for``: seconds during which CreateGame, JoinGame and ResignSeat are sent again (with the
        same request_id, so never applied twice) after UNAVAILABLE or DEADLINE_EXCEEDED, and, with
        ``retry_refused``, once the delay of a RESOURCE_EXHAUSTED refusal's RetryInfo has passed (a quota,
        a rate limit, an overloaded server); 0 never retries. ``quota_token`` is sent with CreateGame and
        JoinGame (``authorization: Bearer``), and with every other call in ``kutnahora-quota-token``
        (beside the seat token a call may carry): the server's ``--quota-token``, which its per-caller
        quotas do not count, for a service acting for many people (the arena, the web front end)"""
        self.address = address
        self.retry_for = retry_for
        self.retry_refused = retry_refused
        self._quota_metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {quota_token}"),) if quota_token else ()
        )
        self._quota_entry: tuple[tuple[str, str], ...] = ((QUOTA_KEY, quota_token),) if quota_token else ()
        self.tls = tls or root_certificates is not None
        self._channel = open_channel(
            address,
            channel_options(),
            tls=tls,
            root_certificates=root_certificates,
            server_name=server_name,
        )
        # The generated service stubs are untyped; the messages they take and return are typed.
        modules: Any = (
            game_service_pb2_grpc,
            play_service_pb2_grpc,
            replay_service_pb2_grpc,
            admin_service_pb2_grpc,
        )
        self._games: Any = modules[0].GameServiceStub(self._channel)
        self._play: Any = modules[1].PlayServiceStub(self._channel)
        self._replays: Any = modules[2].ReplayServiceStub(self._channel)
        self._admin: Any = modules[3].AdminServiceStub(self._channel)
        self._components: game_service_pb2.GetComponentsResponse | None = None

    @classmethod
    async def connect(
        cls,
        address: str,
        *,
        tls: bool = False,
        ca_cert: str | None = None,
        server_name: str | None = None,
        timeout: float = 5.0,
        retry_for: float = RETRY_FOR,
        retry_refused: bool = True,
        quota_token: str | None = None,
    ) -> Self:
        """Open a connection and wait until the server answers; :class:`ConnectError` if it does not.
        ``retry_for``, ``retry_refused`` and ``quota_token`` are :class:`Client`'s."""
        client = cls(
            address,
            tls=tls,
            root_certificates=read_ca_cert(ca_cert),
            server_name=server_name,
            retry_for=retry_for,
            retry_refused=retry_refused,
            quota_token=quota_token,
        )
        try:
            await client.wait_ready(timeout)
        except BaseException:
            await client.close()
            raise
        return client

    async def wait_ready(self, timeout: float = 5.0) -> None:
        """Wait until the connection is up; :class:`ConnectError` as soon as it fails (saying why: refused,
        closed at once as a TLS port closes a plain connection, a certificate not trusted), or after
        ``timeout`` seconds without an answer."""
        await wait_connected(self._channel, self.address, "the Kutná Hora server", timeout, tls=self.tls)

    async def close(self) -> None:
        """Close the connection; open streams end."""
        await self._channel.close(grace=None)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    # The game lifecycle.

    async def create_game(
        self,
        players: int,
        *,
        seed: int | None = None,
        events: bool = False,
        clock: game_pb2.ClockSettings | None = None,
        label: str = "",
        guild_setup_card: int | None = None,
        mine_setup_card: int | None = None,
        seat_names: Sequence[str] = (),
    ) -> game_service_pb2.CreateGameResponse:
        """Create a game for ``players`` seats; it starts once every seat has joined. With ``seat_names``
        (one per seat) every seat is taken at creation and the response's ``seat_tokens`` hold their
        tokens; :meth:`create_seated_game` wraps that."""
        options = game_pb2.GameOptions(players=players, events=events)
        if guild_setup_card is not None:
            options.guild_setup_card = guild_setup_card
        if mine_setup_card is not None:
            options.mine_setup_card = mine_setup_card
        request = game_service_pb2.CreateGameRequest(options=options, label=label, seat_names=seat_names)
        if seed is not None:
            request.seed = seed
        if clock is not None:
            request.clock.CopyFrom(clock)
        return await self._call_again(
            lambda: self._games.CreateGame(request, metadata=self._quota_metadata),
            request,
            "creating a game",
            game_service_pb2.CreateGameResponse,
        )

    async def create_seated_game(
        self,
        seat_names: Sequence[str],
        *,
        seed: int | None = None,
        events: bool = False,
        clock: game_pb2.ClockSettings | None = None,
        label: str = "",
        guild_setup_card: int | None = None,
        mine_setup_card: int | None = None,
    ) -> tuple[game_service_pb2.CreateGameResponse, list[SeatCredentials]]:
        """Create a game with every seat taken (one name per seat) and return it with each seat's
        credentials, in seat order. The game starts at once; the other arguments are :meth:`create_game`'s.

        A server older than ``seat_names`` answers without seat tokens; its seats are then joined one by
        one, so the result is the same. Should a join fail or be cancelled there, the game is abandoned
        before the error goes on: it is made whole or not at all, as by a newer server."""
        created = await self.create_game(
            len(seat_names),
            seed=seed,
            events=events,
            clock=clock,
            label=label,
            guild_setup_card=guild_setup_card,
            mine_setup_card=mine_setup_card,
            seat_names=seat_names,
        )
        game_id = created.game.game_id
        if len(created.seat_tokens) == len(seat_names):
            seats = [SeatCredentials(game_id, seat, token) for seat, token in enumerate(created.seat_tokens)]
        else:
            try:
                seats = [await self.join_game(game_id, seat, name) for seat, name in enumerate(seat_names)]
            except BaseException:
                with contextlib.suppress(ClientError, asyncio.CancelledError):
                    reason = "its seats could not all be joined"
                    await asyncio.shield(self.abandon(game_id, created.game_token, reason))
                raise
        return created, seats

    async def join_game(self, game_id: str, seat: int | None = None, name: str = "") -> SeatCredentials:
        """Join a seat (the lowest free one when ``seat`` is None) and return its credentials."""
        request = game_service_pb2.JoinGameRequest(game_id=game_id, name=name)
        if seat is not None:
            request.seat = seat
        doing = f"joining game {game_id}" + (f" as seat {seat}" if seat is not None else "")
        response = await self._call_again(
            lambda: self._games.JoinGame(request, metadata=self._quota_metadata),
            request,
            doing,
            game_service_pb2.JoinGameResponse,
        )
        return SeatCredentials(game_id, response.seat, response.seat_token)

    def seat_metadata(self, seat: SeatCredentials) -> tuple[tuple[str, str], ...]:
        """The metadata of a seat's call: its seat token, and this client's quota token beside it."""
        return (*seat.metadata(), *self._quota_entry)

    async def get_game(self, game_id: str) -> game_pb2.GameSummary:
        """One game's summary: options, seats, status, and its result once finished."""
        response = await self._call(
            self._games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), metadata=self._quota_entry),
            f"reading game {game_id}",
            game_service_pb2.GetGameResponse,
        )
        return response.game

    async def list_games(
        self,
        status: int = game_pb2.GAME_STATUS_UNSPECIFIED,
        label: str = "",
        page_size: int = 50,
    ) -> list[game_pb2.GameSummary]:
        """Games on the server, newest first, optionally only those of one status or label (the first page;
        :meth:`list_games_page` continues a listing)."""
        games, _ = await self.list_games_page(status, label, page_size)
        return games

    async def list_games_page(
        self,
        status: int = game_pb2.GAME_STATUS_UNSPECIFIED,
        label: str = "",
        page_size: int = 50,
        page_token: str = "",
    ) -> tuple[list[game_pb2.GameSummary], str]:
        """One page of games, newest first, and the token of the next page ("" on the last): give that token
        as ``page_token`` to go on where this page ended."""
        request = game_service_pb2.ListGamesRequest(
            status=cast(Any, status), label=label, page_size=page_size, page_token=page_token
        )
        response = await self._call(
            self._games.ListGames(request, metadata=self._quota_entry),
            "listing games",
            game_service_pb2.ListGamesResponse,
        )
        return list(response.games), response.next_page_token

    async def components(self) -> components_pb2.ComponentSet:
        """The component set the server plays with (read once, then cached)."""
        response = self._components
        if response is None:
            response = await self._call(
                self._games.GetComponents(
                    game_service_pb2.GetComponentsRequest(), metadata=self._quota_entry
                ),
                "reading the component set",
                game_service_pb2.GetComponentsResponse,
            )
            self._components = response
        assert response is not None
        return response.components

    async def rules_version(self) -> int:
        """The version of the rules the server plays by."""
        await self.components()
        assert self._components is not None
        return int(self._components.rules_version)

    async def resign(self, seat: SeatCredentials) -> game_pb2.GameSummary:
        """Resign a seat: the server's random policy plays it to the end."""
        request = game_service_pb2.ResignSeatRequest(game_id=seat.game_id, seat=seat.seat)
        response = await self._call_again(
            lambda: self._games.ResignSeat(request, metadata=self.seat_metadata(seat)),
            request,
            f"resigning seat {seat.seat}",
            game_service_pb2.ResignSeatResponse,
        )
        return response.game

    async def abandon(self, game_id: str, game_token: str, reason: str = "") -> game_pb2.GameSummary:
        """Abandon a game (needs the game token CreateGame returned)."""
        request = game_service_pb2.AbandonGameRequest(game_id=game_id, reason=reason)
        metadata = (("authorization", f"Bearer {game_token}"),)
        response = await self._call(
            self._games.AbandonGame(request, metadata=metadata),
            f"abandoning game {game_id}",
            game_service_pb2.AbandonGameResponse,
        )
        return response.game

    async def replay(self, game_id: str) -> replay_service_pb2.GetReplayResponse:
        """The replay of an ended game: options, seed, every decision, result and state hash."""
        request = replay_service_pb2.GetReplayRequest(game_id=game_id)
        return await self._call(
            self._replays.GetReplay(request, metadata=self._quota_entry),
            f"reading the replay of {game_id}",
            replay_service_pb2.GetReplayResponse,
        )

    async def server_info(self) -> admin_service_pb2.GetServerInfoResponse:
        """The server's version, limits and load."""
        request = admin_service_pb2.GetServerInfoRequest()
        return await self._call(
            self._admin.GetServerInfo(request, metadata=self._quota_entry),
            "reading the server's info",
            admin_service_pb2.GetServerInfoResponse,
        )

    # Playing and watching.

    async def observe(
        self, game_id: str, seat: SeatCredentials | None = None
    ) -> play_service_pb2.GetObservationResponse:
        """The game now, as ``seat`` sees it, or as a spectator when ``seat`` is None."""
        request = play_service_pb2.GetObservationRequest(game_id=game_id)
        metadata = self._quota_entry
        if seat is not None:
            request.seat = seat.seat
            metadata = self.seat_metadata(seat)
        return await self._call(
            self._play.GetObservation(request, metadata=metadata),
            f"reading game {game_id}",
            play_service_pb2.GetObservationResponse,
        )

    async def submit(
        self, seat: SeatCredentials, observation: Observation, choice: Choice
    ) -> play_service_pb2.SubmitDecisionResponse:
        """Submit one decision over a unary call (the Play stream is faster for bots)."""
        request = play_service_pb2.SubmitDecisionRequest(
            game_id=seat.game_id,
            seat=seat.seat,
            version=observation.version,
            answer=to_answer(choice, observation),
        )
        return await self._call(
            self._play.SubmitDecision(request, metadata=self.seat_metadata(seat)),
            "submitting the decision",
            play_service_pb2.SubmitDecisionResponse,
        )

    async def watch(
        self,
        game_id: str,
        seat: SeatCredentials | None = None,
        from_version: int = 0,
        *,
        reconnect_for: float = 30.0,
    ) -> AsyncIterator[play_service_pb2.WatchGameResponse]:
        """Every version of a game from ``from_version`` on, with the decision and events behind it.

        The stream ends after the game has ended. A dropped connection is reopened from the next
        version for up to ``reconnect_for`` seconds, so no version is missed or repeated.
        """
        next_version = from_version
        dropped_since: float | None = None
        delay = 0.1
        while True:
            request = play_service_pb2.WatchGameRequest(game_id=game_id, from_version=next_version)
            metadata = self._quota_entry
            if seat is not None:
                request.seat = seat.seat
                metadata = self.seat_metadata(seat)
            call = self._play.WatchGame(request, metadata=metadata)
            try:
                async for message in call:
                    dropped_since, delay = None, 0.1
                    next_version = message.observation.version + 1
                    yield message
                return
            except grpc.aio.AioRpcError as error:
                now = time.monotonic()
                dropped_since = now if dropped_since is None else dropped_since
                if error.code() not in RETRYABLE_CODES or now - dropped_since > reconnect_for:
                    raise rpc_error(error, f"watching game {game_id}") from None
                log.info("watch stream of %s dropped (%s); reconnecting", game_id, error.code().name)
            finally:
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def play(
        self,
        bot: Bot,
        seat: SeatCredentials,
        *,
        reconnect_for: float = 30.0,
    ) -> GameOutcome:
        """Play ``seat`` with ``bot`` until the game ends; see the module docstring for the loop."""
        summary = await self.get_game(seat.game_id)
        info = GameInfo(
            game_id=seat.game_id,
            seat=seat.seat,
            players=summary.options.players,
            components=await self.components(),
            rules_version=await self.rules_version(),
            summary=summary,
        )
        bot.start(info)
        outcome = await _PlaySession(self, bot, seat, reconnect_for).run()
        bot.finish(outcome)
        return outcome

    async def _call_again(
        self, call: Callable[[], Awaitable[Any]], request: Any, doing: str, kind: type[Response]
    ) -> Response:
        """A mutating call with a fresh ``request_id``, sent again with the same id after transient
        failures, with exponential backoff and jitter, for up to :attr:`retry_for` seconds; and after a
        ``RESOURCE_EXHAUSTED`` refusal carrying a ``RetryInfo`` (a quota, a rate limit, an overloaded
        server), once its delay has passed, when that is within the same time (a refusal stores nothing,
        so asking again is safe)."""
        request.request_id = str(uuid.uuid4())
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.retry_for
        delay = RETRY_FIRST_DELAY
        while True:
            try:
                return await self._call(call(), doing, kind)
            except ClientError as error:
                wait = refusal_wait(error) if self.retry_refused else None
                if wait is not None:
                    if loop.time() + wait > give_up:
                        raise
                    await asyncio.sleep(wait)
                    continue
                if error.code not in TRANSIENT_CODES or loop.time() + delay > give_up:
                    raise
            await asyncio.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, RETRY_MAX_DELAY)

    @staticmethod
    async def _call(call: Awaitable[Any], doing: str, kind: type[Response]) -> Response:
        """Await one unary call, turning a gRPC error into a :class:`ClientError` that says ``doing``."""
        try:
            response = await call
        except grpc.aio.AioRpcError as error:
            raise rpc_error(error, doing) from None
        if not isinstance(response, kind):
            raise ClientError(f"{doing} failed: the server sent an unexpected {type(response).__name__}.")
        return response


class _StreamDropped(Exception):
    """The Play stream ended without a GameEnded message."""


class _PlaySession:
    """One seat's play loop over the Play stream, across reconnects."""

    def __init__(self, client: Client, bot: Bot, seat: SeatCredentials, reconnect_for: float) -> None:
        self.client = client
        self.bot = bot
        self.seat = seat
        self.reconnect_for = reconnect_for
        self.last_answered = -1  # the highest version this session has answered
        self.decisions = 0
        self.reconnects = 0
        self.refused = 0
        self.received = 0  # messages read on the current stream
        self.store_refusals = 0  # answers refused in a row because the server's store was away
        self.acknowledge = type(bot).accepted is not Bot.accepted  # confirmations only for bots that listen

    async def run(self) -> GameOutcome:
        dropped_since: float | None = None
        delay = 0.1
        while True:
            self.received = 0
            try:
                return await self._stream_once()
            except (grpc.aio.AioRpcError, _StreamDropped) as error:
                if isinstance(error, grpc.aio.AioRpcError) and error.code() not in RETRYABLE_CODES:
                    raise rpc_error(error, f"playing seat {self.seat.seat} of {self.seat.game_id}") from None
                now = time.monotonic()
                if self.received:  # the stream had worked: a new drop, with a new reconnect budget
                    dropped_since, delay = None, 0.1
                dropped_since = dropped_since if dropped_since is not None else now
                if now - dropped_since > self.reconnect_for:
                    raise ConnectError(
                        f"lost the connection to {self.client.address} while playing game "
                        f"{self.seat.game_id} and could not reconnect within {self.reconnect_for:g} s."
                    ) from None
                log.info("play stream of seat %d dropped (%s); reconnecting", self.seat.seat, error)
                self.reconnects += 1
                # The last answer may have been lost with the connection: answer whatever the server asks
                # next, even a version answered before (an exact retry is recognised and applied once).
                self.last_answered = -1
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def _stream_once(self) -> GameOutcome:
        call = self.client._play.Play(metadata=self.client.seat_metadata(self.seat))
        try:
            start = play_service_pb2.PlayStart(
                game_id=self.seat.game_id, seat=self.seat.seat, acknowledge=self.acknowledge
            )
            await call.write(play_service_pb2.PlayRequest(start=start))
            while True:
                response = await call.read()
                if response is grpc.aio.EOF:  # type: ignore[attr-defined]
                    raise _StreamDropped("the server closed the stream before the game ended")
                self.received += 1
                which = response.WhichOneof("message")
                if which == "your_turn":
                    observation = response.your_turn.observation
                    if observation.version > self.last_answered:
                        self.store_refusals = 0
                        await self._answer(call, observation)
                elif which == "accepted":
                    self.bot.accepted(response.accepted.version)
                elif which == "rejected":
                    self.bot.refused(response.rejected)
                    await self._rejected(call, response.rejected)
                elif which == "game_ended":
                    ended = response.game_ended
                    await call.done_writing()
                    return GameOutcome(
                        game_id=self.seat.game_id,
                        seat=self.seat.seat,
                        status=ended.status,
                        result=ended.result if ended.HasField("result") else None,
                        observation=ended.observation,
                        decisions=self.decisions,
                        reconnects=self.reconnects,
                        refused=self.refused,
                    )
        finally:
            if not call.done():
                call.cancel()

    async def _answer(self, call: grpc.aio.StreamStreamCall[Any, Any], observation: Observation) -> None:
        choice = self.bot.choose(observation)
        if inspect.isawaitable(choice):
            choice = await choice
        answer = to_answer(choice, observation)
        decision = play_service_pb2.PlayDecision(version=observation.version, answer=answer)
        try:
            await call.write(play_service_pb2.PlayRequest(decision=decision))
        except asyncio.InvalidStateError:  # the call ended while the bot thought (game over, server gone)
            raise _StreamDropped("the stream ended while the bot was choosing") from None
        self.last_answered = observation.version
        self.decisions += 1

    async def _rejected(
        self, call: grpc.aio.StreamStreamCall[Any, Any], rejected: play_service_pb2.DecisionRejected
    ) -> None:
        reason = rejected.reason
        self.refused += 1
        log.info("seat %d: the server refused an answer: %s", self.seat.seat, rejected.message)
        again = (game_pb2.REJECT_REASON_RATE_LIMITED, game_pb2.REJECT_REASON_STORE_UNAVAILABLE)
        if reason == game_pb2.REJECT_REASON_STALE_VERSION or reason in again:
            if reason == game_pb2.REJECT_REASON_RATE_LIMITED:
                await asyncio.sleep(0.25)
            elif reason == game_pb2.REJECT_REASON_STORE_UNAVAILABLE:
                # Nothing was applied: the server's store is away (a database restarting). Send the same
                # turn again, waiting longer each time it is refused so, up to 5 s between tries.
                self.store_refusals += 1
                await asyncio.sleep(min(0.25 * 2 ** min(self.store_refusals, 5), 5.0))
            # Re-read the game: if this seat owes a decision we have not answered, choose again. A
            # YourTurn for the same version may follow; the version check above ignores it.
            response = await self.client.observe(self.seat.game_id, self.seat)
            observation = response.observation
            owes = observation.HasField("pending") and observation.pending.seat == self.seat.seat
            active = response.status == game_pb2.GAME_STATUS_ACTIVE and owes and observation.pending.options
            retry = reason in again or observation.version > self.last_answered
            if active and retry:
                self.last_answered = min(self.last_answered, observation.version - 1)
                await self._answer(call, observation)
            return
        if reason in (game_pb2.REJECT_REASON_NOT_YOUR_TURN, game_pb2.REJECT_REASON_GAME_NOT_ACTIVE):
            return  # the server will say when this seat owes a decision again, or that the game ended
        raise ClientError(f"the server refused the bot's decision: {rejected.message}")
