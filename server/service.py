"""The gRPC servicers: one thin method per RPC over :class:`kutnahora.server.hub.GameHub` and
:class:`LiveGame`.

Each method reads its request (turning its wire values into engine values once, with
:mod:`kutnahora.server.reading`), checks credentials and limits, calls the domain, and answers with what
:mod:`kutnahora.server.messages` and the game's :class:`~kutnahora.server.feed.GameFeed` build. Answers
that carry observations are sent as bytes assembled from cached parts, so the handlers are registered
here from the service descriptors with serialisers that accept either a message or ready bytes. Every
call is wrapped once: it binds ``rpc``, ``request_id``, ``game_id`` and ``seat`` to the log context,
applies the per-connection rate limit, counts the call, and turns a
:class:`kutnahora.plumbing.errors.ServiceError` into the call's status.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
import grpc.aio
import structlog
from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message

import kutnahora
from kutnahora import engine, wire
from kutnahora.native import PYTHON, native_available
from kutnahora.plumbing import auth
from kutnahora.plumbing.callers import Caller, RateLimiter, forwarded_values
from kutnahora.plumbing.errors import (
    ServiceError,
    clip,
    exhausted,
    invalid,
    precondition,
    server_fault,
    store_unavailable,
)
from kutnahora.plumbing.logs import LineBudget
from kutnahora.plumbing.messages import decode, serialize
from kutnahora.plumbing.status import status_details
from kutnahora.server import messages, reading, requests
from kutnahora.server.config import ServerConfig
from kutnahora.server.feed import GameFeed
from kutnahora.server.feed import feed as feed_of
from kutnahora.server.game import LiveGame
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics
from kutnahora.server.overload import Overload
from kutnahora.server.records import Answer, AppliedDecision, GameStatus
from kutnahora.server.requests import Sealer
from kutnahora.server.seats import Holder, SeatLimits, replaced_refusal
from kutnahora.server.store import StoreError
from kutnahora.v1 import (
    admin_service_pb2,
    game_pb2,
    game_service_pb2,
    play_service_pb2,
    replay_service_pb2,
)

EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]  # the stubs lack the end-of-stream marker
MAX_LABEL = 200
MAX_NAME = 100
REQUEST_ID_KEY = "x-request-id"
REPLAY_CHUNK = 128  # versions rebuilt per step when a watcher is behind the prepared messages

M = TypeVar("M", bound=Message)
R = TypeVar("R")
FAULT_EXIT_STATUS = 75  # the exit status of the fault hook (KUTNAHORA_FAULT_EXIT_AFTER_COMMIT)
SERVER_ENGINE = PYTHON
"""The rules engine the server plays its games with: the reference engine, whose states its store, views
and replays are made of (the native core, kutnahora.native, serves search, self-play and simulation)."""
PURGE_EVERY = 3600.0  # seconds between deletions of request ids past their window
Handler = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]


def _request_id(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == REQUEST_ID_KEY:
            text = value.decode() if isinstance(value, bytes) else value
            return text[:64]
    return uuid.uuid4().hex[:16]


def _token(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    return auth.token_from_metadata(context.invocation_metadata())


class KutnaHoraService:
    """Every RPC of the four services, sharing one hub, limiter and metrics."""

    def __init__(self, hub: GameHub, config: ServerConfig, metrics: Metrics, log: Any) -> None:
        self.hub = hub
        self.config = config
        self.metrics = metrics
        self.log = log
        self.limiter = RateLimiter(config.limits.rate_per_second, config.limits.rate_burst)
        limits = config.limits
        self.seats = SeatLimits(
            limits.seat_rate,
            limits.seat_burst,
            limits.seat_stream_rate,
            limits.seat_stream_burst,
            store=hub.quotas.store,
        )
        self.overload = Overload(
            limits.overload_lag_ms / 1000,
            limits.overload_seconds,
            cpu=limits.overload_cpu,
            decision=limits.overload_decision_ms / 1000,
        )
        self.refusal_lines = LineBudget()
        self.components = messages.components_response(hub.services.components, engine.RULES_VERSION)
        self.watchers = 0
        self.players = 0
        self._streams: set[asyncio.Event] = set()
        self.orphan_readers: set[asyncio.Task[None]] = set()
        self._request_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._purged_at = 0.0
        # A fault-injection hook for tests of retries: the methods (comma-separated) after whose stored
        # change the process exits at once, as if killed between the commit and the reply.
        hook = os.environ.get("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT", "")
        self._exit_after_commit = {name.strip() for name in hook.split(",") if name.strip()}
        self.stopping = False

    # --- registration --------------------------------------------------------------------------------

    def handlers(self) -> list[grpc.GenericRpcHandler[Any, Any]]:
        """The generic handlers of the four services, built from their descriptors.

        Requests arrive as the raw bytes gRPC received (no deserialiser is registered): each handler decodes
        its request itself, so a body that does not decode is answered INVALID_ARGUMENT with a sentence,
        like any other malformed request, instead of failing inside gRPC before the handler runs.
        """
        return [self._service_handler(service) for service in self.services()]

    @staticmethod
    def services() -> tuple[descriptor.ServiceDescriptor, ...]:
        """The descriptors of the four services."""
        return (
            game_service_pb2.DESCRIPTOR.services_by_name["GameService"],
            play_service_pb2.DESCRIPTOR.services_by_name["PlayService"],
            replay_service_pb2.DESCRIPTOR.services_by_name["ReplayService"],
            admin_service_pb2.DESCRIPTOR.services_by_name["AdminService"],
        )

    @classmethod
    def service_names(cls) -> list[str]:
        """The full names of the four services."""
        return [service.full_name for service in cls.services()]

    def _service_handler(self, service: descriptor.ServiceDescriptor) -> grpc.GenericRpcHandler[Any, Any]:
        methods: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        for method in service.methods:
            request_class = message_factory.GetMessageClass(method.input_type)
            behaviour = getattr(self, method.name)
            if method.client_streaming and method.server_streaming:
                methods[method.name] = grpc.stream_stream_rpc_method_handler(
                    self._wrap_unary(method.name, behaviour, None, "stream"), None, serialize
                )
            elif method.server_streaming:
                methods[method.name] = grpc.unary_stream_rpc_method_handler(
                    self._wrap_unary(method.name, behaviour, request_class, "stream"), None, serialize
                )
            else:
                methods[method.name] = grpc.unary_unary_rpc_method_handler(
                    self._wrap_unary(method.name, behaviour, request_class), None, serialize
                )
        return grpc.method_handlers_generic_handler(service.full_name, methods)

    def _bind_request(self, request: Message) -> None:
        fields: dict[str, Any] = {}
        game_id = getattr(request, "game_id", None)
        if game_id:
            fields["game_id"] = clip(game_id)
        if hasattr(request, "seat") and (
            request.DESCRIPTOR.fields_by_name["seat"].has_presence is False or request.HasField("seat")
        ):
            fields["seat"] = request.seat
        structlog.contextvars.bind_contextvars(**fields)

    def _wrap_unary(
        self, rpc: str, behaviour: Handler, request_class: type[Message] | None, what: str = "request"
    ) -> Handler:
        """Decode the request (unless the method streams its requests), bind the log context, apply the
        rate limit, map errors to statuses and count the outcome."""

        async def handle(body: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            structlog.contextvars.bind_contextvars(rpc=rpc, request_id=_request_id(context))
            code = "OK"
            try:
                request = body
                if request_class is not None:
                    request = decode(request_class, body)
                    self._bind_request(request)
                if not self.limiter.allow(context.peer()):
                    self.metrics.refused.labels(limit="rate").inc()
                    raise exhausted(
                        f"this connection sent more than {self.config.limits.rate_per_second:g} requests "
                        "per second, its limit",
                        "rate_limited",
                    )
                return await behaviour(request, context)
            except ServiceError as error:
                code = error.code.name
                self._log_refusal(rpc, error)
                await self._abort(context, error)
            except asyncio.CancelledError:
                code = "CANCELLED"
                raise
            except StoreError as error:  # every change is stored before it is made: nothing was changed
                code = "UNAVAILABLE"
                self.log.error("store failed", error=str(error))
                await self._abort(
                    context,
                    store_unavailable(
                        f"the game store could not be reached, so this {what} changed nothing; try again"
                    ),
                )
            except Exception:
                if context.code() is not None:  # an abort already chose the status
                    code = str(context.code().name)
                    raise
                code = "INTERNAL"
                self.log.exception("unexpected error")
                await self._abort(context, server_fault(f"the server failed to handle this {what}"))
            finally:
                self.metrics.rpcs.labels(rpc=rpc, code=code).inc()
                structlog.contextvars.clear_contextvars()

        return handle

    @staticmethod
    async def _abort(context: grpc.aio.ServicerContext[Any, Any], error: ServiceError) -> None:
        """End the call with the refusal's status, its sentence, and its ``google.rpc.Status`` details."""
        await context.abort(error.code, error.message, trailing_metadata=status_details(error))

    def _log_refusal(self, rpc: str, error: ServiceError) -> None:
        """Count a refusal, and log it unless this kind of refusal was logged often just now."""
        submission = rpc in ("SubmitDecision", "Play")
        if submission:
            self.metrics.rejected.labels(reason=error.reason).inc()
        left_out = self.refusal_lines.take((rpc, error.reason))
        if left_out is None:
            return
        fields: dict[str, Any] = {"reason": error.reason, "code": error.code.name, "detail": error.message}
        if left_out:
            fields["left_out"] = left_out  # refusals of this kind not logged since the last line
        if submission:
            self.log.warning("submission refused", **fields)
        else:
            self.log.info("request refused", **fields)

    def _caller(self, context: grpc.aio.ServicerContext[Any, Any]) -> Caller:
        """Who makes this call, as the per-caller quotas count it."""
        metadata = context.invocation_metadata()
        return self.hub.quotas.caller(
            context.peer(),
            auth.token_from_metadata(metadata),
            forwarded_values(metadata),
            auth.quota_token_from_metadata(metadata),
        )

    async def _read_game(
        self, context: grpc.aio.ServicerContext[Any, Any], rpc: str, game_id: str
    ) -> LiveGame:
        """Count a read of one game against its caller's read rate (:mod:`.quotas`), then the game. A
        caller counted by the seat or game it proves is counted once the game is found."""
        quotas, caller = self.hub.quotas, self._caller(context)
        if not quotas.counts_by_credential(caller):
            await quotas.check_read(caller, rpc)
            return await self._game(game_id)
        game = await self._game(game_id)
        await quotas.check_read(self._credited(caller, context, game, reading=True), rpc)
        return game

    def _credited(
        self,
        caller: Caller,
        context: grpc.aio.ServicerContext[Any, Any],
        game: LiveGame,
        reading: bool = False,
    ) -> Caller:
        """Who a call of ``game`` counts as: the seat or game its token proves, for a caller whose address
        tells nobody apart (:meth:`.quotas.CallerQuotas.credited`)."""
        hashes = [seat.token_hash for seat in game.seats]
        return self.hub.quotas.credited(
            caller, _token(context), game.game_id, game.game_token_hash, hashes, reading
        )

    async def _open_caller_stream(
        self, context: grpc.aio.ServicerContext[Any, Any], rpc: str, game: LiveGame
    ) -> str | None:
        """Take one of the caller's open streams (:meth:`.quotas.CallerQuotas.open_stream`) for a Play or
        WatchGame stream of ``game``: what to give back when the stream ends."""
        caller = self._credited(self._caller(context), context, game)
        return await self.hub.quotas.open_stream(caller, rpc)

    def check_overload(self, rpc: str) -> None:
        """RESOURCE_EXHAUSTED (OVERLOADED) while the server is overloaded (:mod:`.overload`): new games
        and joins wait, the games under way go on."""
        if not self.overload.overloaded():
            return
        self.metrics.refused.labels(limit="overloaded").inc()
        raise exhausted(
            f"{rpc} refused: the server is overloaded ({self.overload.why()}); the games under way go on; "
            "try again later or on another server",
            "overloaded",
            retry_after=self.overload.window,
        )

    async def _game(self, game_id: str) -> LiveGame:
        if not game_id:
            raise invalid("game_id must be set")
        return await self.hub.get(game_id)

    async def _once(
        self,
        method: str,
        request: Message,
        run: Callable[[Sealer | None], Awaitable[R]],
        again: Callable[[dict[str, Any]], Awaitable[R]],
    ) -> R:
        """``run`` the request, or, when its request id answered the same request before, answer ``again``
        from that first answer (:mod:`kutnahora.server.requests`)."""
        rid = requests.request_id(request)
        if rid is None:
            return self._committed(method, await run(None))
        key = requests.key_hash(rid)
        # The same id twice at once: the second waits for the first, then answers from its record. The
        # lock lives while a call holds it or waits for it; the weak mapping forgets it after.
        lock = self._request_locks.get(key)
        if lock is None:
            lock = self._request_locks[key] = asyncio.Lock()
        async with lock:
            first = requests.live(await self.hub.store.find_request(key), time.time())
            if first is not None:
                return await again(requests.answer_of(rid, method, request, first))
            try:
                answer = await run(lambda fields: requests.seal(rid, method, request, fields, time.time()))
            except (ServiceError, StoreError) as error:
                if isinstance(error, ServiceError) and error.reason != "store_error":
                    raise
                # Another replica may have answered this request id first, which fails this write.
                first = requests.live(await self.hub.store.find_request(key), time.time())
                if first is None:
                    raise
                return await again(requests.answer_of(rid, method, request, first))
        await self._purge_requests()
        return self._committed(method, answer)

    def _committed(self, method: str, answer: R) -> R:
        """The answer of a stored change, unless the fault hook says to die before replying to it."""
        if method in self._exit_after_commit:
            self.log.warning("exiting before the reply (KUTNAHORA_FAULT_EXIT_AFTER_COMMIT)", rpc=method)
            os._exit(FAULT_EXIT_STATUS)
        return answer

    async def _purge_requests(self) -> None:
        """Delete the records of request ids past their window, at most once every :data:`PURGE_EVERY`."""
        now = time.time()
        if now - self._purged_at < PURGE_EVERY:
            return
        self._purged_at = now
        try:
            await self.hub.store.purge_requests(now - requests.WINDOW)
        except StoreError as error:
            self.log.warning("could not delete old request ids", error=str(error))

    def reader_ended(self, reader: asyncio.Task[None]) -> None:
        """Forget a Play stream's reader that outlived its stream, once its call has ended."""
        self.orphan_readers.discard(reader)
        if not reader.cancelled():
            reader.exception()  # retrieved: a read that failed with its call is expected, not an error

    def stop_streams(self) -> None:
        """Tell every open stream to end (graceful shutdown)."""
        self.stopping = True
        for event in self._streams:
            event.set()

    # --- GameService ---------------------------------------------------------------------------------

    async def CreateGame(
        self, request: game_service_pb2.CreateGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_service_pb2.CreateGameResponse:
        """Create a game."""
        caller = self._caller(context)
        await self.hub.quotas.check_rate(caller, "CreateGame")
        if not request.HasField("options"):
            raise invalid("options must be set (at least options.players)")
        try:
            options = wire.game_options_from_wire(request.options)
            clock = reading.clock_from_wire(request.clock, self.config.clock)
        except wire.Malformed as error:
            raise invalid(str(error)) from None
        if len(request.label) > MAX_LABEL:
            raise invalid(f"label must be at most {MAX_LABEL} characters")
        if request.HasField("seed") and request.seed < 0:
            raise invalid(f"seed must not be negative, got {request.seed}")
        seed = request.seed if request.HasField("seed") else None
        for seat, name in enumerate(request.seat_names):
            _check_name(f"seat_names[{seat}]", name)

        async def create(sealer: Sealer | None) -> game_service_pb2.CreateGameResponse:
            self.check_overload("CreateGame")
            game, token, seat_tokens = await self.hub.create(
                options, seed, clock, request.label, request.seat_names, sealer, caller
            )
            return game_service_pb2.CreateGameResponse(
                game=messages.summary(game), game_token=token, seat_tokens=seat_tokens
            )

        async def again(answer: dict[str, Any]) -> game_service_pb2.CreateGameResponse:
            game = await self.hub.get(answer["game_id"])
            return game_service_pb2.CreateGameResponse(
                game=messages.summary(game),
                game_token=answer["game_token"],
                seat_tokens=answer["seat_tokens"],
            )

        return await self._once("CreateGame", request, create, again)

    async def JoinGame(
        self, request: game_service_pb2.JoinGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_service_pb2.JoinGameResponse:
        """Join a seat."""
        await self.hub.quotas.check_rate(self._caller(context), "JoinGame")
        _check_name("name", request.name)
        game = await self._game(request.game_id)

        async def join(sealer: Sealer | None) -> game_service_pb2.JoinGameResponse:
            self.check_overload("JoinGame")
            seat = request.seat if request.HasField("seat") else None
            taken, token = await game.join(seat, request.name, sealer)
            return game_service_pb2.JoinGameResponse(
                seat=taken, seat_token=token, game=messages.summary(game)
            )

        async def again(answer: dict[str, Any]) -> game_service_pb2.JoinGameResponse:
            return game_service_pb2.JoinGameResponse(
                seat=answer["seat"], seat_token=answer["seat_token"], game=messages.summary(game)
            )

        return await self._once("JoinGame", request, join, again)

    async def ListGames(
        self, request: game_service_pb2.ListGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_service_pb2.ListGamesResponse:
        """List games."""
        await self.hub.quotas.check_server_read(self._caller(context), "ListGames")
        try:
            status = reading.status_from_wire(request.status)
        except wire.Malformed:
            raise invalid(f"status {request.status} is not a known game status") from None
        page, next_token = await self.hub.list(status, request.label, request.page_size, request.page_token)
        games = [
            messages.summary(entry)
            if isinstance(entry, LiveGame)
            else messages.row_summary(entry, entry.seats)
            for entry in page
        ]
        return game_service_pb2.ListGamesResponse(games=games, next_page_token=next_token)

    async def GetGame(
        self, request: game_service_pb2.GetGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_service_pb2.GetGameResponse:
        """One game's summary."""
        game = await self._read_game(context, "GetGame", request.game_id)
        seat = auth.matching_seat(_token(context), [s.token_hash for s in game.seats])
        if seat is not None:
            await self._seat_call(game, seat, "GetGame")
        return game_service_pb2.GetGameResponse(game=messages.summary(game))

    async def GetComponents(
        self, request: game_service_pb2.GetComponentsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """The component set (serialised once at start)."""
        await self.hub.quotas.check_server_read(self._caller(context), "GetComponents")
        return self.components

    async def ResignSeat(
        self, request: game_service_pb2.ResignSeatRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_service_pb2.ResignSeatResponse:
        """Resign a seat."""
        game = await self._game(request.game_id)
        await game.authorize_current(request.seat, _token(context))
        await self._seat_call(game, request.seat, "ResignSeat")

        async def resign(sealer: Sealer | None) -> game_service_pb2.ResignSeatResponse:
            await game.resign(request.seat, sealer)
            return game_service_pb2.ResignSeatResponse(game=messages.summary(game))

        async def again(answer: dict[str, Any]) -> game_service_pb2.ResignSeatResponse:
            return game_service_pb2.ResignSeatResponse(game=messages.summary(game))

        return await self._once("ResignSeat", request, resign, again)

    async def AbandonGame(
        self, request: game_service_pb2.AbandonGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_service_pb2.AbandonGameResponse:
        """Abandon a game."""
        if len(request.reason) > MAX_LABEL:
            raise invalid(f"reason must be at most {MAX_LABEL} characters")
        game = await self._game(request.game_id)
        game.authorize_admin(_token(context), self.config.admin_token)
        await game.abandon(request.reason)
        return game_service_pb2.AbandonGameResponse(game=messages.summary(game))

    # --- PlayService ---------------------------------------------------------------------------------

    def sample(self, at: float, lag: float) -> None:
        """One sample of the process signals (ten a second): the loop's lag, and the process's CPU."""
        self.overload.observe(at, lag)
        self.overload.observe_cpu(at, time.process_time())

    def decided(self, seconds: float) -> None:
        """A decision was answered ``seconds`` after it arrived."""
        self.overload.observe_decision(time.monotonic(), seconds)

    async def _seat_call(self, game: LiveGame, seat: int, rpc: str) -> None:
        """Count one call for a seat against its rate (:mod:`kutnahora.server.seats`)."""
        try:
            await self.seats.check_call(game.game_id, seat, rpc)
        except ServiceError:
            self.metrics.refused.labels(limit="seat_rate").inc()
            raise

    async def _decide(self, game: LiveGame, seat: int, version: int, answer: Answer) -> AppliedDecision:
        """Apply a SubmitDecision's answer, counted against its seat's rate unless it is accepted
        (:meth:`kutnahora.server.seats.SeatLimits.check_decision`)."""
        try:
            self.seats.check_decision(game.game_id, seat)
        except ServiceError:
            self.metrics.refused.labels(limit="seat_rate").inc()
            raise
        try:
            record = await game.submit(seat, version, answer)
        except (ServiceError, StoreError):
            await self.seats.not_accepted(game.game_id, seat)
            raise
        self.seats.accepted(game.game_id, seat)
        return record

    async def _viewer(
        self,
        game: LiveGame,
        has_seat: bool,
        seat: int,
        context: grpc.aio.ServicerContext[Any, Any],
        rpc: str,
    ) -> int | None:
        if not has_seat:
            return None
        await game.authorize_current(seat, _token(context))
        await self._seat_call(game, seat, rpc)
        return seat

    async def GetObservation(
        self, request: play_service_pb2.GetObservationRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """The current observation for a seat or a spectator."""
        game = await self._read_game(context, "GetObservation", request.game_id)
        viewer = await self._viewer(game, request.HasField("seat"), request.seat, context, "GetObservation")
        return feed_of(game).get_observation_response(viewer)

    async def SubmitDecision(
        self, request: play_service_pb2.SubmitDecisionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """Apply one decision."""
        started = time.perf_counter()
        if not request.HasField("answer"):
            raise invalid("answer must be set (option_index, decision or option_text)")
        if request.version < 0:
            raise invalid(f"version must not be negative, got {request.version}")
        answer = _answer(request.answer)
        game = await self._game(request.game_id)
        await game.authorize_current(request.seat, _token(context))
        record = await self._decide(game, request.seat, request.version, answer)
        response = await feed_of(game).response(record)
        waited = time.perf_counter() - started
        self.metrics.latency_by_path["unary"].observe(waited)
        self.decided(waited)
        return response

    async def WatchGame(
        self, request: play_service_pb2.WatchGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        """Stream every version of a game from ``from_version`` on."""
        if request.from_version < 0:
            raise invalid(f"from_version must not be negative, got {request.from_version}")
        game = await self._game(request.game_id)
        viewer = await self._viewer(game, request.HasField("seat"), request.seat, context, "WatchGame")
        if self.watchers >= self.config.limits.max_watchers:
            self.metrics.refused.labels(limit="max_watchers").inc()
            raise exhausted(
                f"the server already serves {self.config.limits.max_watchers} watch streams, its limit",
                "max_watchers",
            )
        holder = await self._open_caller_stream(context, "WatchGame", game)
        wake = game.subscribe()
        self._streams.add(wake)
        feed = feed_of(game)
        feed.add_watcher(viewer)
        self.watchers += 1
        self.metrics.watch_streams.inc()
        try:
            await self._watch(feed, viewer, request.from_version, wake, context)
        finally:
            self.watchers -= 1
            self.metrics.watch_streams.dec()
            feed.remove_watcher(viewer)
            game.unsubscribe(wake)
            self._streams.discard(wake)
            await self.hub.quotas.close_stream(holder)

    async def _watch(
        self,
        feed: GameFeed,
        viewer: int | None,
        cursor: int,
        wake: asyncio.Event,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        game = feed.game
        told: tuple[bool, ...] | None = None  # who held the seats when the stream last said so
        while not self.stopping:
            current = game.version
            if cursor <= current:
                message = feed.watch_message(cursor, viewer)
                if message is not None:
                    await context.write(message)
                    cursor += 1
                    continue
                stop = min(current + 1, cursor + REPLAY_CHUNK)
                replayed = await asyncio.to_thread(feed.replay_watch_messages, viewer, cursor, stop)
                for message in replayed:
                    await context.write(message)
                    cursor += 1
                continue
            joined = tuple(seat.joined for seat in game.seats)
            if joined != told and (told is not None or game.status is GameStatus.WAITING):
                # a watch of a game waiting for players hears who holds the seats, then each join
                taken: list[int | None] = []
                if told is not None:
                    taken = [s for s, now in enumerate(joined) if now and not told[s]]
                for seat in taken or [None]:
                    await context.write(feed.seats_message(viewer, seat))
                told = joined
                continue
            if game.status is GameStatus.FINISHED:
                return
            if game.status is GameStatus.ABANDONED:
                await context.write(feed.abandoned_message(viewer))
                return
            if game.closed:
                return
            wake.clear()
            if game.version < cursor and not game.ended and not game.closed:
                await wake.wait()

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Play one seat over a bidirectional stream."""
        body = await context.read()
        if body is EOF:
            return
        first = decode(play_service_pb2.PlayRequest, body)
        if first.WhichOneof("message") != "start":
            raise invalid("the first message of a Play stream must be a PlayStart")
        start = first.start
        structlog.contextvars.bind_contextvars(game_id=clip(start.game_id), seat=start.seat)
        game = await self._game(start.game_id)
        await game.authorize_current(start.seat, _token(context))
        # A stream that takes its seat over from another takes no new place: the older one ends.
        held = self.seats.holds_stream(game.game_id, start.seat)
        if self.players >= self.config.limits.max_players and not held:
            self.metrics.refused.labels(limit="max_players").inc()
            raise exhausted(
                f"the server already serves {self.config.limits.max_players} play streams, its limit",
                "max_players",
            )
        holder = await self._open_caller_stream(context, "Play", game)
        stream = _PlayStream(self, game, start.seat, start.acknowledge, context)
        try:
            await self.seats.open_stream(game.game_id, start.seat, stream)
        except BaseException as error:  # refused, or the call ended while the opening was announced
            game.unsubscribe(stream.wake)
            if isinstance(error, ServiceError):
                self.metrics.refused.labels(limit="seat_streams").inc()
            await self.hub.quotas.close_stream(holder)
            raise
        self.players += 1
        self.metrics.play_streams.inc()
        self._streams.add(stream.wake)
        try:
            await stream.run()
        finally:
            self.seats.close_stream(game.game_id, start.seat, stream)
            self._streams.discard(stream.wake)
            self.players -= 1
            self.metrics.play_streams.dec()
            await self.hub.quotas.close_stream(holder)

    # --- ReplayService -------------------------------------------------------------------------------

    async def GetReplay(
        self, request: replay_service_pb2.GetReplayRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> replay_service_pb2.GetReplayResponse:
        """The full log of an ended game."""
        game = await self._read_game(context, "GetReplay", request.game_id)
        if not game.ended:
            raise precondition(
                f"game {game.game_id} is {game.status}; its replay (with its seed) is served once it "
                "has ended",
                "game_not_ended",
            )
        response = replay_service_pb2.GetReplayResponse(
            game=messages.summary(game), seed=game.seed, state_hash=engine.state_hash(game.state)
        )
        for record in game.history:
            response.decisions.append(messages.record_message(record))
        return response

    # --- AdminService --------------------------------------------------------------------------------

    async def GetServerInfo(
        self, request: admin_service_pb2.GetServerInfoRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_service_pb2.GetServerInfoResponse:
        """The server's version, limits and load."""
        await self.hub.quotas.check_server_read(self._caller(context), "GetServerInfo")
        limits = self.config.limits
        uptime_ms = int((time.time() - self.hub.started_at) * 1000)
        response = admin_service_pb2.GetServerInfoResponse(
            server_version=kutnahora.__version__,
            rules_version=engine.RULES_VERSION,
            limits=admin_service_pb2.ServerLimits(
                max_message_bytes=limits.max_message_bytes,
                max_games=limits.max_games,
                max_watchers=limits.max_watchers,
                rate_per_second=limits.rate_per_second,
                rate_burst=limits.rate_burst,
            ),
            uptime=messages.duration_ms(uptime_ms),
            store=self.hub.store.kind,
            watchers=self.watchers,
            players=self.players,
            rules_engine=SERVER_ENGINE,
            native_core=native_available(),
        )
        for status, count in self.hub.counts().items():
            response.games.add(status=messages.STATUS[status], count=count)
        return response


def _check_name(field: str, name: str) -> None:
    """INVALID_ARGUMENT when a player's name (the request's ``field``) is longer than :data:`MAX_NAME`."""
    if len(name) > MAX_NAME:
        raise invalid(f"{field} must be at most {MAX_NAME} characters")


def _answer(answer: game_pb2.Answer) -> Answer:
    """The engine value a wire answer names (read once, here); INVALID_ARGUMENT when it names none."""
    try:
        return reading.answer_from_wire(answer)
    except wire.Malformed as error:
        raise invalid(str(error)) from None


class _PlayStream(Holder):
    """One Play stream: a reader task submits the seat's decisions; the writer sends turns and replies.

    A newer stream of the same seat takes it over (:meth:`take_over`): the writer stops at its next wake
    (it is not cancelled: a write cancelled inside grpc.aio could leave the call never ending), and the
    call ends ABORTED (``STREAM_REPLACED``)."""

    def __init__(
        self,
        service: KutnaHoraService,
        game: LiveGame,
        seat: int,
        acknowledge: bool,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        self.service = service
        self.game = game
        self.feed = feed_of(game)
        self.seat = seat
        self.acknowledge = acknowledge
        self.context = context
        self.peer = context.peer()
        self.wake = game.subscribe(seat)
        self.outbox: deque[bytes] = deque()
        self.reading = True
        self.writing = True
        self.taken_over = False
        self._writer: asyncio.Task[None] | None = None

    def take_over(self) -> None:
        """A newer stream of this seat plays it now: end this one at once."""
        self.taken_over = True
        self.service.metrics.streams_taken_over.inc()
        self.wake.set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        reader = loop.create_task(self._read())
        self._writer = loop.create_task(self._write())
        try:
            try:
                await self._writer
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not self.taken_over or (current is not None and current.cancelling()):
                    raise
            if self.taken_over:
                raise replaced_refusal(self.game.game_id, self.seat)
        finally:
            self.game.unsubscribe(self.wake)
            self.writing = False
            if reader.done():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    reader.result()
            else:
                # The reader is left to end with the call instead of being cancelled: grpc.aio frees a
                # received message only in the coroutine that awaited its read, so a read cancelled while
                # it waits would keep the next message the client sends for as long as the server runs.
                self.service.orphan_readers.add(reader)
                reader.add_done_callback(self.service.reader_ended)

    async def _write(self) -> None:
        game, seat, context = self.game, self.seat, self.context
        sent_version = -1
        self.wake.set()
        while True:
            await self.wake.wait()
            self.wake.clear()
            if self.taken_over:
                return
            while self.outbox:
                await context.write(self.outbox.popleft())
            if game.ended:
                await context.write(self.feed.game_ended(seat))
                return
            if game.closed or self.service.stopping:
                return
            pending = game.state.pending
            if (
                game.status is GameStatus.ACTIVE
                and pending is not None
                and pending.seat == seat
                and game.version != sent_version
                and not game.replaced(seat)
            ):
                sent_version = game.version
                await context.write(self.feed.your_turn(seat))
            if not self.reading and not self.outbox:
                return

    async def _read(self) -> None:
        service, game, context = self.service, self.game, self.context
        try:
            while True:
                body = await context.read()
                if body is EOF:
                    return
                if not self.writing:
                    continue  # the stream has ended: what arrives now is read and dropped until the call ends
                started = time.perf_counter()
                try:
                    request = decode(play_service_pb2.PlayRequest, body)
                    if not service.limiter.allow(self.peer):
                        service.metrics.refused.labels(limit="rate").inc()
                        raise exhausted(
                            f"this connection sent more than {service.config.limits.rate_per_second:g} "
                            "messages per second, its limit",
                            "rate_limited",
                        )
                    if request.WhichOneof("message") != "decision":
                        raise invalid("only the first message of a Play stream may be a PlayStart")
                    decision = request.decision
                    if not decision.HasField("answer"):
                        raise invalid("decision.answer must be set (option_index, decision or option_text)")
                    answer = _answer(decision.answer)
                    record = await game.submit(self.seat, decision.version, answer)
                except ServiceError as error:
                    service._log_refusal("Play", error)
                    self.outbox.append(messages.rejected_message(error, game.version))
                    self.wake.set()
                    continue
                waited = time.perf_counter() - started
                service.metrics.latency_by_path["stream"].observe(waited)
                service.decided(waited)
                if self.acknowledge:
                    self.outbox.append(messages.accepted_message(record))
                    self.wake.set()
        finally:
            self.reading = False
            self.wake.set()
