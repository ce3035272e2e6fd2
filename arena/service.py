"""The ``kutnahora.v1.ArenaService`` servicer: accounts, seeking, leaderboards and profiles, and the calls
of hosted bots' authors (:mod:`kutnahora.arena.submission_calls`).

Refusals are :class:`kutnahora.plumbing.errors.ServiceError`, sent as the game server sends them: a status
code, a sentence, and a ``google.rpc.ErrorInfo`` whose reason is a ``RejectReason`` name
(:func:`kutnahora.plumbing.status.status_details`). API keys are checked as the game server checks seat
tokens (:mod:`kutnahora.plumbing.auth`: stored as SHA-256, compared in constant time) and never logged.
Seek and StreamEvents also take the seek key of a live host lease (:mod:`kutnahora.arena.hosting`), acting
as its bot; every other call refuses it.

The arena is open to strangers, so every call is first counted against its caller's limits
(:mod:`kutnahora.arena.quotas`: registrations, calls, open streams), before the store is read: a refused
call costs the arena nothing more. The admin token and the ``--quota-exempt`` callers are not counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import grpc.aio
from google.protobuf import duration_pb2, timestamp_pb2

from kutnahora.arena.accounts import Account, NameTaken
from kutnahora.arena.game_events import GameEvent
from kutnahora.arena.lobby import Lobby
from kutnahora.arena.names import name_problem
from kutnahora.arena.pools import Pool
from kutnahora.arena.quotas import ArenaQuotas
from kutnahora.arena.ratings import Rating
from kutnahora.arena.store import ArenaStore
from kutnahora.arena.submission_calls import SubmissionCalls
from kutnahora.plumbing import auth
from kutnahora.plumbing.callers import Caller, forwarded_values
from kutnahora.plumbing.errors import (
    ServiceError,
    StoreError,
    clip,
    conflict,
    denied,
    invalid,
    server_fault,
    store_unavailable,
    unauthenticated,
)
from kutnahora.plumbing.status import status_details
from kutnahora.v1 import arena_service_pb2 as pb
from kutnahora.v1 import arena_service_pb2_grpc

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]
MAX_PAGE_SIZE = 200
LEASE_CHECK_SECONDS = 5.0  # how often a stream opened with a seek key asks whether its lease lives


async def guarded(
    context: Context,
    what: str,
    work: Callable[[], Awaitable[T]],
    abort: Callable[[Context, ServiceError], Awaitable[None]],
    log: Any,
) -> T:
    """Run one call's work, turning refusals and store failures into the call's status (``abort``)."""
    try:
        return await work()
    except ServiceError as error:
        await abort(context, error)
    except StoreError as error:
        await abort(context, store_unavailable(f"the arena store failed: {error}"))
    except (asyncio.CancelledError, grpc.aio.AbortError):
        raise
    except Exception:
        log.exception("arena call failed", rpc=what)
        await abort(context, server_fault(f"the arena failed to handle this {what}"))
    raise AssertionError("unreachable: abort raises")


def _duration(seconds: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromNanoseconds(int(seconds * 1e9))
    return duration


def _timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(int(seconds * 1e9))
    return stamp


def _rating(pool: str, rating: Rating) -> pb.PoolRating:
    return pb.PoolRating(
        pool=pool,
        mu=rating.mu,
        sigma=rating.sigma,
        conservative=rating.conservative,
        games=rating.games,
        wins=rating.wins,
    )


def _pool_rating(pool: str, fields: list[float]) -> pb.PoolRating:
    return _rating(pool, Rating(float(fields[0]), float(fields[1]), int(fields[2]), int(fields[3])))


def event_message(event: GameEvent) -> pb.StreamEventsResponse:
    """The ``StreamEventsResponse`` of one stored event."""
    detail = event.detail
    pool, seat = str(detail["pool"]), int(detail["seat"])
    message = pb.StreamEventsResponse(recorded_at=_timestamp(event.recorded_at))
    if event.kind == "started":
        message.started.CopyFrom(
            pb.BotGameStarted(
                pool=pool,
                server_address=str(detail["server"]),
                game_id=event.game_id,
                seat=seat,
                seat_names=[str(name) for name in detail["seat_names"]],
            )
        )
    elif event.kind == "finished":
        message.finished.CopyFrom(
            pb.BotGameFinished(
                pool=pool,
                game_id=event.game_id,
                seat=seat,
                place=int(detail["place"]),
                rating_before=_pool_rating(pool, detail["before"]),
                rating_after=_pool_rating(pool, detail["after"]),
            )
        )
    else:
        cause = pb.AbandonCause.Name(
            pb.AbandonCause.Value("ABANDON_CAUSE_" + str(detail.get("cause", "unspecified")).upper())
        )
        message.abandoned.CopyFrom(
            pb.BotGameAbandoned(
                pool=pool,
                game_id=event.game_id,
                seat=seat,
                cause=cause,
                message=str(detail.get("message", "")),
            )
        )
    return message


class ArenaServicer(arena_service_pb2_grpc.ArenaServiceServicer):
    """Answers ``ArenaService`` calls."""

    def __init__(
        self,
        store: ArenaStore,
        lobby: Lobby,
        *,
        registration: str,
        admin_token: str,
        quotas: ArenaQuotas,
        status_interval: float,
        log: Any,
        submissions_per_day: int = 20,
    ) -> None:
        self.store = store
        self.lobby = lobby
        self.registration = registration
        self.admin_hash = auth.token_hash(admin_token) if admin_token else ""
        self.quotas = quotas
        self.status_interval = status_interval
        self.lease_check = LEASE_CHECK_SECONDS
        self.log = log
        self.authors = SubmissionCalls(
            store, sorted(lobby.pools), per_day=submissions_per_day, metrics=lobby.metrics, log=log
        )

    # --- helpers ---------------------------------------------------------------------------------------

    async def _guard(self, context: Context, what: str, work: Callable[[], Awaitable[T]]) -> T:
        """Run one call's work, turning refusals and store failures into the call's status."""
        return await guarded(context, what, work, self._abort, self.log)

    async def _abort(self, context: Context, error: ServiceError) -> None:
        self.lobby.metrics.refusals.labels(reason=error.reason.value).inc()
        await context.abort(error.code, error.message, trailing_metadata=status_details(error))

    def _is_admin(self, context: Context) -> bool:
        token = auth.token_from_metadata(context.invocation_metadata())
        return bool(self.admin_hash) and auth.matches(token, self.admin_hash)

    async def _account(self, context: Context, *, seek_key: bool = False) -> Account:
        """The calling bot, from its API key (or, with ``seek_key``, the seek key of its live host lease);
        UNAUTHENTICATED without a valid, unrevoked key, PERMISSION_DENIED for a seek key where it does not
        serve."""
        account, _ = await self._seeker(context, seek_key=seek_key)
        return account

    async def _seeker(self, context: Context, *, seek_key: bool = True) -> tuple[Account, str | None]:
        """As :meth:`_account`; with the hash of the seek key the call carries, None for an API key (a
        stream opened with a seek key lives only as long as its lease: :meth:`_lease_ended`)."""
        key = auth.token_from_metadata(context.invocation_metadata())
        if not key:
            raise unauthenticated("this call needs the bot's API key as 'authorization: Bearer <key>'")
        seek_hash = None
        account = await self.store.account_by_key_hash(auth.token_hash(key))
        if account is None or not auth.matches(key, account.key_hash):
            account = await self._seek_key_account(key, seek_key)
            seek_hash = auth.token_hash(key)
        if account.revoked:
            raise ServiceError(
                grpc.StatusCode.UNAUTHENTICATED,
                f"the API key of bot {account.name!r} was revoked",
                "key_revoked",
            )
        return account, seek_hash

    async def _lease_ended(self, account: Account, seek_hash: str | None, checked: list[float]) -> None:
        """End a stream opened with a seek key (UNAUTHENTICATED) once its host lease has ended: expired,
        released or handed over, on this replica or another. Asked of the store at most every
        ``lease_check`` seconds (:data:`LEASE_CHECK_SECONDS`; ``checked`` holds when it was last asked)."""
        now = time.monotonic()
        if seek_hash is None or now - checked[0] < self.lease_check:
            return
        checked[0] = now
        found = await self.store.seek_key_account(seek_hash)
        if found is None or not found[1]:
            raise unauthenticated(f"the seek key's lease of bot {account.name!r} has ended")

    async def _seek_key_account(self, key: str, allowed: bool) -> Account:
        """The bot whose live host lease has this seek key; UNAUTHENTICATED for a key the arena does not
        know or whose lease has ended, PERMISSION_DENIED unless the call takes seek keys."""
        found = await self.store.seek_key_account(auth.token_hash(key))
        if found is None:
            raise unauthenticated("the API key is not one the arena knows")
        account, live = found
        if not allowed:
            raise denied(
                f"this key is a seek key of bot {account.name!r}'s hosted play, which acts only for Seek and "
                "StreamEvents; this call takes the bot's API key"
            )
        if not live:
            raise unauthenticated(f"the seek key's lease of bot {account.name!r} has ended")
        return account

    def _caller(self, context: Context) -> Caller:
        """Who makes this call, as the per-caller limits count it."""
        metadata = context.invocation_metadata()
        return self.quotas.caller(
            context.peer(), auth.token_from_metadata(metadata), forwarded_values(metadata)
        )

    async def _open_stream(
        self, context: Context, rpc: str, what: str, caller: Caller, work: Callable[[], Awaitable[T]]
    ) -> tuple[T, str | None]:
        """Open a stream: count it against its caller's calls and open streams, then run ``work``; its
        answer and the caller's stream, which the stream's end gives back (``quotas.close_stream``), as
        this does when opening fails."""

        async def opened() -> tuple[T, str | None]:
            place = await self.quotas.open_stream(caller, rpc)
            try:
                return await work(), place
            except BaseException:
                self.quotas.close_stream(place)
                raise

        return await self._guard(context, what, opened)

    def _pool(self, name: str) -> Pool:
        pool = self.lobby.pools.get(name)
        if pool is None:
            known = ", ".join(sorted(self.lobby.pools))
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"there is no pool {clip(name)!r}; the pools are {known}",
                "unknown_pool",
            )
        return pool

    # --- accounts --------------------------------------------------------------------------------------

    async def RegisterBot(self, request: pb.RegisterBotRequest, context: Context) -> pb.RegisterBotResponse:
        async def work() -> pb.RegisterBotResponse:
            if self.registration == "admin" and not self._is_admin(context):
                raise denied("this arena registers bots only with its admin token")
            await self.quotas.count_registration(
                self._caller(context)
            )  # every attempt, before anything is read
            problem = name_problem(request.name)
            if problem is not None:
                raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, problem, "name_invalid")
            key = auth.new_token()
            try:
                await self.store.register(request.name, auth.token_hash(key))
            except NameTaken:
                raise conflict(f"a bot named {request.name!r} exists already", "name_taken") from None
            self.log.info("bot registered", bot=request.name)
            return pb.RegisterBotResponse(name=request.name, api_key=key)

        return await self._guard(context, "registration", work)

    async def RotateKey(self, request: pb.RotateKeyRequest, context: Context) -> pb.RotateKeyResponse:
        async def work() -> pb.RotateKeyResponse:
            await self.quotas.count_call(self._caller(context), "RotateKey")
            account = await self._account(context)
            key = auth.new_token()
            await self.store.set_key(account.account_id, auth.token_hash(key))
            self.log.info("key rotated", bot=account.name)
            return pb.RotateKeyResponse(api_key=key)

        return await self._guard(context, "key rotation", work)

    async def RevokeKey(self, request: pb.RevokeKeyRequest, context: Context) -> pb.RevokeKeyResponse:
        async def work() -> pb.RevokeKeyResponse:
            await self.quotas.count_call(self._caller(context), "RevokeKey")
            if self._is_admin(context):
                if not request.name:
                    raise invalid("with the admin token, name the bot whose key is revoked")
                account = await self.store.account_by_name(request.name)
                if account is None:
                    raise ServiceError(
                        grpc.StatusCode.NOT_FOUND, f"there is no bot {clip(request.name)!r}", "not_found"
                    )
            else:
                account = await self._account(context)
                if request.name and request.name != account.name:
                    raise denied("a bot's key revokes only its own key; the admin token revokes others'")
            await self.store.revoke(account.account_id)
            self.lobby.withdraw_account(account.account_id)
            self.log.info("key revoked", bot=account.name)
            return pb.RevokeKeyResponse()

        return await self._guard(context, "key revocation", work)

    # --- seeking ---------------------------------------------------------------------------------------

    async def Seek(self, request: pb.SeekRequest, context: Context) -> AsyncIterator[pb.SeekResponse]:
        async def open_ticket() -> tuple[Any, Account, str | None]:
            account, seek_hash = await self._seeker(context)
            pool = self._pool(request.pool)
            return await self.lobby.open_ticket(account, pool), account, seek_hash

        caller = self._caller(context)
        (ticket, account, seek_hash), place = await self._open_stream(
            context, "Seek", "seek", caller, open_ticket
        )
        checked = [time.monotonic()]
        try:
            while True:
                waiting = pb.SeekWaiting(
                    pool=ticket.pool.name,
                    tickets_waiting=self.lobby.waiting(ticket.pool.name),
                    waited=_duration(time.monotonic() - ticket.opened),
                )
                yield pb.SeekResponse(waiting=waiting)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(ticket.matched), self.status_interval)
                if ticket.matched.cancelled():
                    await self._abort(
                        context,
                        ServiceError(
                            grpc.StatusCode.UNAUTHENTICATED, "the bot's key was revoked", "key_revoked"
                        ),
                    )
                if not ticket.matched.done():
                    try:
                        await self._lease_ended(account, seek_hash, checked)
                    except ServiceError as error:
                        await self._abort(context, error)
                if ticket.matched.done():
                    seat = ticket.matched.result()
                    yield pb.SeekResponse(
                        matched=pb.SeekMatched(
                            pool=seat.pool,
                            server_address=seat.server,
                            game_id=seat.game_id,
                            seat=seat.seat,
                            seat_token=seat.token,
                            seat_names=seat.seat_names,
                        )
                    )
                    return
        finally:
            self.lobby.withdraw(ticket)
            self.quotas.close_stream(place)

    # --- events ----------------------------------------------------------------------------------------

    async def StreamEvents(
        self, request: pb.StreamEventsRequest, context: Context
    ) -> AsyncIterator[pb.StreamEventsResponse]:
        async def open_stream() -> tuple[
            Account, str | None, asyncio.Queue[GameEvent | None], list[GameEvent]
        ]:
            account, seek_hash = await self._seeker(context)
            queue = self.lobby.watch(account.account_id)  # before reading the games, so none is missed
            try:
                playing = await self.store.started_events(account.account_id)
            except BaseException:
                self.lobby.unwatch(account.account_id, queue)
                raise
            return account, seek_hash, queue, playing

        caller = self._caller(context)
        (account, seek_hash, queue, playing), place = await self._open_stream(
            context, "StreamEvents", "event stream", caller, open_stream
        )
        checked = [time.monotonic()]
        try:
            await context.send_initial_metadata(())  # tells the bot the stream is live
            told = set()
            for started in playing:
                told.add(started.game_id)
                yield event_message(started)
            while True:
                if seek_hash is None:
                    event = await queue.get()
                else:
                    try:
                        event = await asyncio.wait_for(queue.get(), self.lease_check)
                    except TimeoutError:
                        try:
                            await self._lease_ended(account, seek_hash, checked)
                        except ServiceError as error:
                            await self._abort(context, error)
                            return
                        continue
                if event is None:
                    await self._abort(
                        context,
                        ServiceError(
                            grpc.StatusCode.UNAUTHENTICATED, "the bot's key was revoked", "key_revoked"
                        ),
                    )
                    return
                if event.kind == "started" and event.game_id in told:
                    continue  # sent on opening already
                yield event_message(event)
        finally:
            self.lobby.unwatch(account.account_id, queue)
            self.quotas.close_stream(place)

    # --- reading ---------------------------------------------------------------------------------------

    async def ListPools(self, request: pb.ListPoolsRequest, context: Context) -> pb.ListPoolsResponse:
        async def work() -> pb.ListPoolsResponse:
            await self.quotas.count_call(self._caller(context), "ListPools")
            response = pb.ListPoolsResponse()
            for pool in sorted(self.lobby.pools.values(), key=lambda p: p.name):
                wire = response.pools.add(name=pool.name, players=pool.players)
                if pool.decision_ms is not None:
                    wire.decision_time.CopyFrom(_duration(pool.decision_ms / 1000))
                if pool.bank_ms is not None:
                    wire.time_bank.CopyFrom(_duration(pool.bank_ms / 1000))
            return response

        return await self._guard(context, "pool listing", work)

    async def GetLeaderboard(
        self, request: pb.GetLeaderboardRequest, context: Context
    ) -> pb.GetLeaderboardResponse:
        async def work() -> pb.GetLeaderboardResponse:
            await self.quotas.count_call(self._caller(context), "GetLeaderboard")
            pool = self._pool(request.pool)
            if request.page < 0 or request.page_size < 0:
                raise invalid("page and page_size must not be negative")
            size = min(request.page_size or 50, MAX_PAGE_SIZE)
            entries, total = await self.store.leaderboard(pool.name, request.page * size, size)
            response = pb.GetLeaderboardResponse(total=total)
            hosted = await self.store.playing_versions([account.account_id for account, _ in entries])
            for offset, (account, rating) in enumerate(entries):
                version = hosted.get(account.account_id, 0)
                response.entries.add(
                    rank=request.page * size + offset + 1,
                    name=account.name,
                    rating=_rating(pool.name, rating),
                    house=account.house,
                    hosted=version > 0,
                    hosted_version=version,
                )
            return response

        return await self._guard(context, "leaderboard request", work)

    async def GetBotProfile(
        self, request: pb.GetBotProfileRequest, context: Context
    ) -> pb.GetBotProfileResponse:
        async def work() -> pb.GetBotProfileResponse:
            await self.quotas.count_call(self._caller(context), "GetBotProfile")
            account = await self.store.account_by_name(request.name)
            if account is None:
                raise ServiceError(
                    grpc.StatusCode.NOT_FOUND, f"there is no bot {clip(request.name)!r}", "not_found"
                )
            ratings, history, games = await self.store.profile(account.account_id)
            version = (await self.store.playing_versions([account.account_id])).get(account.account_id, 0)
            response = pb.GetBotProfileResponse(
                name=account.name,
                house=account.house,
                revoked=account.revoked,
                registered_at=_timestamp(account.created_at),
                hosted=version > 0,
                hosted_version=version,
            )
            for pool, rating in ratings.items():
                response.ratings.append(_rating(pool, rating))
            for point in history:
                response.history.add(
                    pool=point.pool,
                    game_id=point.game_id,
                    mu=point.mu,
                    sigma=point.sigma,
                    rated_at=_timestamp(point.rated_at),
                )
            for game in games:
                response.recent_games.add(
                    game_id=game.game_id,
                    pool=game.pool,
                    server_address=game.server,
                    seat=game.seat,
                    seat_names=game.seat_names,
                    status=game.status,
                    place=game.place,
                    created_at=_timestamp(game.created_at),
                )
            return response

        return await self._guard(context, "profile request", work)

    # --- hosted bots' authors ----------------------------------------------------------------------------

    async def SubmitBot(self, request: pb.SubmitBotRequest, context: Context) -> pb.SubmitBotResponse:
        async def work() -> pb.SubmitBotResponse:
            await self.quotas.count_call(self._caller(context), "SubmitBot")
            return await self.authors.submit(await self._account(context), request)

        return await self._guard(context, "submission", work)

    async def ListSubmissions(
        self, request: pb.ListSubmissionsRequest, context: Context
    ) -> pb.ListSubmissionsResponse:
        async def work() -> pb.ListSubmissionsResponse:
            await self.quotas.count_call(self._caller(context), "ListSubmissions")
            return await self.authors.list(await self._account(context))

        return await self._guard(context, "submission listing", work)

    async def GetSubmission(
        self, request: pb.GetSubmissionRequest, context: Context
    ) -> pb.GetSubmissionResponse:
        async def work() -> pb.GetSubmissionResponse:
            await self.quotas.count_call(self._caller(context), "GetSubmission")
            return await self.authors.get(await self._account(context), request.version)

        return await self._guard(context, "submission request", work)

    async def GetSeatLog(self, request: pb.GetSeatLogRequest, context: Context) -> pb.GetSeatLogResponse:
        async def work() -> pb.GetSeatLogResponse:
            await self.quotas.count_call(self._caller(context), "GetSeatLog")
            return await self.authors.seat_log(await self._account(context), request.game_id)

        return await self._guard(context, "seat log request", work)

    async def SetHosting(self, request: pb.SetHostingRequest, context: Context) -> pb.SetHostingResponse:
        async def work() -> pb.SetHostingResponse:
            await self.quotas.count_call(self._caller(context), "SetHosting")
            return await self.authors.set_hosting(await self._account(context), request.paused)

        return await self._guard(context, "hosting change", work)
