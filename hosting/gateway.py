"""The seat gateway: the only way out of a hosted bot's sandbox, passing just what playing its seat needs.

A hosted bot does not reach the game server itself. The socket bound into its sandbox
(``/run/kutnahora/server.sock``) is a Unix socket of its own, served by a :class:`SeatGateway` in the
runner: a ``grpc.aio`` proxy with generic handlers and identity serializers, which forwards the bot's
bytes unchanged (its seat token and other metadata too, its deadline, its cancellation) over a connection
of its own to the server, for these methods only:

* ``PlayService/Play`` (the game id of the first message, its ``PlayStart``, must be one of the bot's);
* ``PlayService/GetObservation``, ``PlayService/SubmitDecision``, ``GameService/GetGame`` of the bot's
  own game(s) (the request's ``game_id``);
* ``GameService/GetComponents``;
* ``AdminService/GetServerInfo``, of which only the public part comes back (version, rules version,
  limits; not the server's load, store or uptime).

Everything else (creating, joining, listing, resigning or abandoning games, watching, replays, other
games, the arena, reflection, health, unknown methods) is answered ``PERMISSION_DENIED`` with the
``google.rpc.ErrorInfo`` reason ``OUTSIDE_SEAT`` and a sentence naming what was refused, without a byte
reaching the server. After the first 100 refusals, refusals are answered one at a time, 20 ms apart,
so that a bot hammering calls it may not make cannot keep the runner (and the other bots' gateways) busy.
Requests are decoded only to read their game id; what the server receives is what the bot sent.

A seat has one Play stream here as on the server: a newer Play stream of the bot takes the seat over, and
the older one ends at once, ``ABORTED`` with the ``ErrorInfo`` reason ``STREAM_REPLACED``; Play streams
opened faster than ``stream_rate`` are refused ``RESOURCE_EXHAUSTED`` (``RATE_LIMITED``) with a
``RetryInfo``, without reaching the server. What the bot may cost the runner (connections, calls and bytes
in flight, the largest message, a call rate, a share of the runner's CPU) is bounded by the
:class:`~kutnahora.hosting.gateway_limits.BotBudget` its gateways share, which also counts
what it did cost (:mod:`kutnahora.hosting.gateway_limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import grpc
from google.protobuf.message import DecodeError, Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from kutnahora.hosting.gateway_limits import BotBudget, Bucket, Refusal, metered
from kutnahora.plumbing.auth import QUOTA_KEY
from kutnahora.v1 import admin_service_pb2, game_service_pb2, play_service_pb2

DOMAIN = "kutnahora.v1"
REASON = "OUTSIDE_SEAT"
GAME_SERVICE = "/kutnahora.v1.GameService/"
PLAY_SERVICE = "/kutnahora.v1.PlayService/"
PLAY = PLAY_SERVICE + "Play"
SERVER_INFO = "/kutnahora.v1.AdminService/GetServerInfo"
COMPONENTS = GAME_SERVICE + "GetComponents"
# Unary methods of one game: the request type that names it (field ``game_id``).
GAME_METHODS: dict[str, type[Message]] = {
    PLAY_SERVICE + "GetObservation": play_service_pb2.GetObservationRequest,
    PLAY_SERVICE + "SubmitDecision": play_service_pb2.SubmitDecisionRequest,
    GAME_SERVICE + "GetGame": game_service_pb2.GetGameRequest,
}
ALLOWED = (*GAME_METHODS, PLAY, COMPONENTS, SERVER_INFO)
SUBMIT = PLAY_SERVICE + "SubmitDecision"
YOUR_TURN_TAG = 0x0A  # a PlayResponse whose first byte is field 1 (your_turn), length-delimited
UPSTREAM_MESSAGE = 16 << 20  # the largest answer taken from the server (observations are far smaller)
AUTHORIZATION = "authorization"
DROPPED_METADATA = ("grpc-", ":")  # gRPC's own keys; everything else (the seat token) goes through


def _identity(data: bytes) -> bytes:
    return data


def _refusal(code: grpc.StatusCode, reason: str, message: str) -> status_pb2.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message)
    status.details.add().Pack(info)
    return status


def _outgoing(
    context: grpc.aio.ServicerContext[Any, Any], seat_token: str | None
) -> list[tuple[str, str | bytes]]:
    """The bot's metadata, less gRPC's own entries, to send on to the server. With the seat's token known
    (``seat_token``), the credentials are the gateway's to give: whatever ``authorization`` or quota token
    the bot sent is replaced by its seat token, so every call it makes, reads without a token included, is
    counted as its seat by the server's per-caller limits, and no other credential passes through."""
    kept = [
        (key, value)
        for key, value in context.invocation_metadata() or ()
        if not key.startswith(DROPPED_METADATA)
        and (seat_token is None or key not in (AUTHORIZATION, QUOTA_KEY))
    ]
    if seat_token is not None:
        kept.append((AUTHORIZATION, f"Bearer {seat_token}"))
    return kept


def _timeout(context: grpc.aio.ServicerContext[Any, Any]) -> float | None:
    remaining = context.time_remaining()
    return None if remaining is None or remaining > 1e8 else max(0.0, remaining)


def public_server_info(data: bytes) -> bytes:
    """A ``GetServerInfoResponse`` cut to what any caller may know: versions and limits."""
    full = admin_service_pb2.GetServerInfoResponse.FromString(data)
    public = admin_service_pb2.GetServerInfoResponse(
        server_version=full.server_version, rules_version=full.rules_version
    )
    public.limits.CopyFrom(full.limits)
    return bytes(public.SerializeToString())


class SeatGateway:
    """Serves one hosted bot on its own Unix socket, forwarding only its own games' calls.

    ``upstream`` is the server's address as gRPC names it (``unix:/path`` or ``host:port``);
    ``credentials`` the channel credentials for TLS, None for a plain connection. ``seat_token``: the
    seat's token, sent with every call in place of whatever credential the bot sends (None: the bot's
    own metadata goes through as it is)."""

    def __init__(
        self,
        socket: Path,
        upstream: str,
        games: Iterable[str],
        *,
        credentials: grpc.ChannelCredentials | None = None,
        budget: BotBudget | None = None,
        seat_token: str | None = None,
    ) -> None:
        self.socket = socket
        self.seat_token = seat_token
        self.upstream = upstream
        self.games = frozenset(games)
        self.credentials = credentials
        self.budget = budget or BotBudget("bot")
        self.limits = self.budget.limits
        self.refused = 0  # calls refused by the gateway
        self.forwarded = 0  # calls sent on to the server
        self.message_bytes = self.limits.message_bytes  # lowered to the server's limit at start
        self.openings = Bucket(self.limits.stream_rate, self.limits.stream_burst)
        self.play: _PlayHolder | None = None  # the Play stream that holds the seat
        self._server: grpc.aio.Server | None = None
        self._channel: grpc.aio.Channel | None = None

    async def start(self) -> None:
        """Connect to the server and listen on :attr:`socket` (removed first if a stale one is there;
        left readable and writable by everyone, since the bot's own user connects to it)."""
        options = [
            ("grpc.max_receive_message_length", UPSTREAM_MESSAGE),
            ("grpc.max_send_message_length", UPSTREAM_MESSAGE),
            ("grpc.use_local_subchannel_pool", 1),  # a connection of its own: the server's rates are per bot
        ]
        if self.credentials is not None:
            self._channel = grpc.aio.secure_channel(self.upstream, self.credentials, options=options)
        else:
            self._channel = grpc.aio.insecure_channel(self.upstream, options=options)
        self.message_bytes = await self._server_message_limit()
        limits = self.limits
        server = grpc.aio.server(
            handlers=[_Handler(self)],
            options=[
                ("grpc.max_receive_message_length", self.message_bytes),
                ("grpc.max_send_message_length", UPSTREAM_MESSAGE),
                ("grpc.max_concurrent_streams", limits.calls_per_connection),
                ("grpc.max_allowed_incoming_connections", limits.connections),
                ("grpc.so_reuseport", 0),
            ],
        )
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        server.add_insecure_port(f"unix:{self.socket}")
        await server.start()
        os.chmod(self.socket, 0o666)
        self._server = server

    async def _server_message_limit(self) -> int:
        """The largest request the bot may send: its limit, never more than the server accepts."""
        call = self.channel.unary_unary(
            SERVER_INFO,
            request_serializer=admin_service_pb2.GetServerInfoRequest.SerializeToString,
            response_deserializer=admin_service_pb2.GetServerInfoResponse.FromString,
        )
        try:
            info = await call(admin_service_pb2.GetServerInfoRequest(), timeout=10)
        except grpc.aio.AioRpcError:
            return self.limits.message_bytes
        server = int(info.limits.max_message_bytes)
        return min(self.limits.message_bytes, server) if server > 0 else self.limits.message_bytes

    async def stop(self) -> None:
        """Stop listening, end the bot's open calls and close the connection to the server."""
        if self._server is not None:
            await self._server.stop(grace=None)
            self._server = None
        if self._channel is not None:
            await self._channel.close(grace=None)
            self._channel = None
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()

    async def __aenter__(self) -> SeatGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # What the handlers call.

    @property
    def channel(self) -> grpc.aio.Channel:
        assert self._channel is not None, "the gateway is not started"
        return self._channel

    async def deny(self, context: grpc.aio.ServicerContext[Any, Any], method: str, why: str) -> None:
        self.refused += 1
        self.budget.refused("outside_seat")
        await self.budget.pace()  # paced, so that no bot can keep the runner busy refusing it
        sentence = (
            f"a hosted bot may only play its own seat: {why}; the calls it may make are Play, "
            "GetObservation, SubmitDecision and GetGame of its own game, GetComponents and GetServerInfo."
        )
        status = rpc_status.to_status(_refusal(grpc.StatusCode.PERMISSION_DENIED, REASON, sentence))
        await context.abort(status.code, status.details, status.trailing_metadata)

    async def exhausted(self, context: grpc.aio.ServicerContext[Any, Any], refusal: Refusal) -> None:
        """RESOURCE_EXHAUSTED for a call past the bot's bounds, with its ErrorInfo and RetryInfo."""
        self.refused += 1
        await self.budget.pace()
        status = _refusal(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal.reason, refusal.message)
        info = error_details_pb2.ErrorInfo()
        status.details[0].Unpack(info)
        info.metadata["limit" if refusal.reason == "LIMIT_REACHED" else "quota"] = refusal.limit
        status.details[0].Pack(info)
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromTimedelta(timedelta(seconds=refusal.retry_after))
        status.details.add().Pack(retry)
        grpc_status = rpc_status.to_status(status)
        await context.abort(grpc_status.code, grpc_status.details, grpc_status.trailing_metadata)

    async def replaced(self, context: grpc.aio.ServicerContext[Any, Any], game_id: str, seat: int) -> None:
        """End a Play stream that a newer one of its seat took over."""
        self.budget.usage.streams_taken_over += 1
        sentence = (
            f"another Play stream for seat {seat} of game {game_id} took over; this one has ended (a seat "
            "has one Play stream at a time: the newest plays)"
        )
        status = rpc_status.to_status(_refusal(grpc.StatusCode.ABORTED, "STREAM_REPLACED", sentence))
        await context.abort(status.code, status.details, status.trailing_metadata)

    async def malformed(self, context: grpc.aio.ServicerContext[Any, Any], method: str) -> None:
        self.refused += 1
        self.budget.refused("malformed")
        sentence = f"the request to {method.rsplit('/', 1)[-1]} cannot be read (it does not decode)."
        status = rpc_status.to_status(_refusal(grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED", sentence))
        await context.abort(status.code, status.details, status.trailing_metadata)

    async def relay_error(
        self, context: grpc.aio.ServicerContext[Any, Any], error: grpc.aio.AioRpcError
    ) -> None:
        """The server's refusal, passed on as it came: code, sentence and details (its ErrorInfo)."""
        trailing = error.trailing_metadata() or ()
        await context.abort(error.code(), error.details() or "", tuple(trailing))  # type: ignore[arg-type]

    def check_game(self, game_id: str) -> str | None:
        """Why a call about ``game_id`` is refused, or None when it is the bot's game."""
        if game_id in self.games:
            return None
        shown = game_id if len(game_id) <= 100 else game_id[:100] + "…"
        return f"game {shown!r} is not the game it plays" if game_id else "the request names no game"


class _Handler(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    """Picks the forwarding behaviour for each method the bot calls."""

    def __init__(self, gateway: SeatGateway) -> None:
        self.gateway = gateway

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any] | None:
        method: str = details.method
        gateway = self.gateway
        if method == PLAY:
            return grpc.stream_stream_rpc_method_handler(
                _play(gateway), request_deserializer=_identity, response_serializer=_identity
            )
        if method in GAME_METHODS or method in (COMPONENTS, SERVER_INFO):
            return grpc.unary_unary_rpc_method_handler(
                _unary(gateway, method), request_deserializer=_identity, response_serializer=_identity
            )
        return grpc.stream_stream_rpc_method_handler(
            _refuse(gateway, method), request_deserializer=_identity, response_serializer=_identity
        )


def _refuse(gateway: SeatGateway, method: str) -> Callable[..., AsyncIterator[bytes]]:
    name = method.strip("/").replace("kutnahora.v1.", "") or "(no method)"

    async def handler(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        await gateway.deny(context, method, f"{name} is not one of its calls")
        yield b""  # never reached: a generator, as a stream handler must be

    return handler


def _unary(gateway: SeatGateway, method: str) -> Callable[..., Any]:
    kind = GAME_METHODS.get(method)
    budget = gateway.budget

    async def forward(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        if kind is not None:
            try:
                game_id = kind.FromString(request).game_id  # type: ignore[attr-defined]
            except DecodeError:
                await gateway.malformed(context, method)
                raise AssertionError("not reached") from None
            why = gateway.check_game(game_id)
            if why is not None:
                await gateway.deny(context, method, why)
        await budget.cpu_wait()
        try:
            budget.admit(method, len(request))
        except Refusal as refusal:
            await gateway.exhausted(context, refusal)
            raise AssertionError("not reached") from None
        held = len(request)
        try:
            gateway.forwarded += 1
            budget.usage.bytes_up += len(request)
            call = gateway.channel.unary_unary(
                method, request_serializer=_identity, response_deserializer=_identity
            )(request, metadata=_outgoing(context, gateway.seat_token), timeout=_timeout(context))
            try:
                response: bytes = await call
            except grpc.aio.AioRpcError as error:
                await gateway.relay_error(context, error)
                raise AssertionError("not reached") from None
            except asyncio.CancelledError:
                call.cancel()
                raise
            if method == SUBMIT:
                budget.turn()  # an accepted decision is not counted against the rate
            if method == SERVER_INFO:
                response = public_server_info(response)
            budget.hold(len(response))
            held += len(response)
            budget.usage.bytes_down += len(response)
            return response
        finally:
            budget.release(held)

    async def handler(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return await metered(budget, forward(request, context))

    return handler


@dataclass(eq=False, slots=True)
class _PlayHolder:
    """The Play stream that holds a gateway's seat, and its call to the server (once made)."""

    call: Any = None
    taken_over: bool = False

    def take_over(self) -> None:
        self.taken_over = True
        if self.call is not None:
            self.call.cancel()


def _play(gateway: SeatGateway) -> Callable[..., Awaitable[None]]:
    budget = gateway.budget

    async def handler(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await metered(budget, play(requests, context))

    async def play(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> None:
        try:
            first = await anext(requests)
        except StopAsyncIteration:
            return
        try:
            start = play_service_pb2.PlayRequest.FromString(first)
        except DecodeError:
            await gateway.malformed(context, PLAY)
            return
        why = (
            gateway.check_game(start.start.game_id)
            if start.HasField("start")
            else "the first message of a Play stream must be its PlayStart"
        )
        if why is not None:
            await gateway.deny(context, PLAY, why)
            return
        wait = gateway.openings.take()
        if wait > 0:
            budget.refused("play_streams")
            await gateway.exhausted(
                context,
                Refusal(
                    f"a Play stream for seat {start.start.seat} refused: this seat opened Play streams "
                    f"faster than its {gateway.limits.stream_rate:g} per second allow (each new one takes "
                    f"the seat over from the one before); try again in {wait:.2f} s",
                    "RATE_LIMITED",
                    "gateway_streams",
                    wait,
                ),
            )
            return
        await budget.cpu_wait()
        holder = _PlayHolder()
        if gateway.play is not None:
            gateway.play.take_over()
        gateway.play = holder

        gateway.forwarded += 1
        budget.usage.calls += 1
        call = gateway.channel.stream_stream(
            PLAY, request_serializer=_identity, response_deserializer=_identity
        )(metadata=_outgoing(context, gateway.seat_token), timeout=_timeout(context))  # type: ignore[call-arg]
        holder.call = call

        async def upward() -> None:
            # An upstream that ends, or a bot that goes, ends this too; the loop below says how.
            with contextlib.suppress(Exception):
                await call.write(first)
                budget.usage.bytes_up += len(first)
                async for request in requests:
                    await budget.message()
                    await budget.cpu_wait()
                    budget.usage.bytes_up += len(request)
                    await call.write(request)
                await call.done_writing()

        sending = asyncio.create_task(metered(budget, upward()))
        try:
            while (read := await call.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]
                response = cast(bytes, read)
                if response[:1] == bytes((YOUR_TURN_TAG,)):
                    budget.turn()  # the decision the seat owes costs nothing
                budget.usage.bytes_down += len(response)
                budget.hold(len(response))
                try:
                    await context.write(response)
                finally:
                    budget.drop(len(response))
            trailing = await call.trailing_metadata()
            if trailing:
                context.set_trailing_metadata(tuple(trailing))
        except grpc.aio.AioRpcError as error:
            if holder.taken_over:
                await gateway.replaced(context, start.start.game_id, start.start.seat)
            await gateway.relay_error(context, error)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not holder.taken_over or (current is not None and current.cancelling()):
                raise
            await gateway.replaced(context, start.start.game_id, start.start.seat)
        finally:
            if gateway.play is holder:
                gateway.play = None
            sending.cancel()
            call.cancel()  # the bot went away (or the stream ended): nothing is left open upstream

    return handler
