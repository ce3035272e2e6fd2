"""One game held in memory: its engine state, seats, clocks, decision history and subscribers.

:class:`LiveGame` is the authority for its game while loaded. Every change goes through its lock and the
same path: check the request, append the decision to the store (durable), apply it with the engine,
charge the clock, then wake every subscriber (watch and play streams). Nothing is applied before it is
stored, and a refused request changes nothing.

It also owns the game's automation: a timer per pending decision that applies the default decision when
the seat's clock runs out, and the random policy that plays seats that resigned or struck out.

It holds that path and the game's life (joining, resigning, finishing, abandoning, catching up with other
replicas); the parts with a job of their own are beside it: the seats and their tokens in
:mod:`kutnahora.server.seating`, the clock and its timer in :mod:`kutnahora.server.clock`, the checks of a
submission in :mod:`kutnahora.server.submission`, replaying the log in :mod:`kutnahora.server.replay`, and
who waits on the game in :mod:`kutnahora.server.subscribers`.

It speaks engine values and the records of :mod:`kutnahora.server.records` only: a submission arrives as an
engine option (or the index of a listed one), and what it returns are records. What it leaves to others:
the wire (every message and its byte caches are :mod:`kutnahora.server.messages`' and
:mod:`kutnahora.server.feed`'s, whose :class:`~kutnahora.server.feed.GameFeed` hears of each change through
:class:`GameListener`), who may call what (checked here, but with tokens parsed by the
servicers), and finding or loading games (:class:`kutnahora.server.hub.GameHub`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import structlog

from kutnahora import engine
from kutnahora.engine import Event, GameOptions, GameResult, GameState, IllegalDecision, Option
from kutnahora.engine.components import ComponentSet
from kutnahora.engine.options import PendingDecision
from kutnahora.plumbing.errors import (
    ServiceError,
    conflict,
    engine_failed,
    precondition,
    stale,
    store_unavailable,
)
from kutnahora.server.clock import TurnTimer, charge_clock, default_option, policy_option, replaced
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.history import DecisionHistory
from kutnahora.server.metrics import Metrics
from kutnahora.server.records import (
    Answer,
    AppliedDecision,
    ClockReading,
    DecisionSource,
    GameStatus,
    ListedIndex,
    SeatState,
    canonical_text,
)
from kutnahora.server.refusals import engine_refusal
from kutnahora.server.replay import replay_log, replay_to, replay_versions
from kutnahora.server.replication import ReplicationMetrics
from kutnahora.server.requests import Sealer
from kutnahora.server.seating import (
    authorize_admin,
    authorize_seat,
    check_seat,
    read_seats,
    seat_row,
    stored_seats,
    taken_seat,
)
from kutnahora.server.store import (
    DecisionRow,
    DuplicateDecision,
    GameRow,
    Store,
    StoredGame,
    StoreError,
    result_to_json,
)
from kutnahora.server.submission import (
    already_answered,
    answered_option,
    check_active,
    listed_option,
    refuse_replaced,
)
from kutnahora.server.subscribers import Subscribers


class GameListener(Protocol):
    """What hears of a game's changes before its subscribers wake (the presenter, to build the new
    version's messages while the game's data is still in the processor's caches)."""

    def changed(self, new_version: bool, waiting_seat: int | None) -> None:
        """The game changed: ``new_version`` when a decision was applied (or the status or seats changed);
        ``waiting_seat`` is the seat that now owes a decision and has a Play stream waiting for it."""

    def ended(self, playing: Sequence[int]) -> None:
        """The game finished or was abandoned: it changes no more. ``playing`` are the seats with a Play
        stream open, each about to be sent its last observation."""


@dataclass(slots=True)
class GameServices:
    """What every game of one server shares."""

    store: Store
    metrics: Metrics
    config: ServerConfig
    components: ComponentSet
    log: Any
    on_status: Callable[[LiveGame, GameStatus, GameStatus], None] = field(default=lambda game, old, new: None)
    # Given when other replicas share the store (it has a change feed): each game then catches up with
    # their writes itself (LiveGame.catch_up), counted here. None for a store without other writers.
    replicas: ReplicationMetrics | None = None


def check_components(row: GameRow, held: str) -> None:
    """Refuse a game played with another component set than ``held`` (this server's, by content hash).

    A game's log means something only with the values it was played with, so a server never rebuilds or
    serves a game of another set (FAILED_PRECONDITION). Games stored before sets were recorded carry no
    hash and are served as they are.
    """
    if row.components_hash and row.components_hash != held:
        raise precondition(
            f"game {row.game_id} was played with the component set {row.components_hash[:16]}, but this "
            f"server holds the set {held[:16]}; serve it from a server started with --components naming "
            "the file of that set",
            "components_mismatch",
        )


async def load(services: GameServices, stored: StoredGame) -> LiveGame:
    """A stored game in memory: set up from its options and seed, then its log replayed
    (:meth:`LiveGame.replay_stored`). Setting up and replaying run in worker threads: they take a while.

    Raises :class:`StoreError` when the log does not replay.
    """
    row = stored.game
    options = GameOptions(row.players, row.events, row.guild_setup_card, row.mine_setup_card)
    state = await asyncio.to_thread(engine.new_game, options, row.seed, services.components)
    game = LiveGame(services, row, state, stored_seats(row, stored.seats), DecisionHistory())
    await asyncio.to_thread(game.replay_stored, stored.decisions)
    game.status = loaded_status(row.status, game.seats, game.state.over)
    return game


def loaded_status(stored: str, seats: Sequence[SeatState], over: bool) -> GameStatus:
    """A game's status from the one stored and what its seats and log show. A game whose every seat is
    taken has started, even where storing that it started failed after its last seat was stored; a game
    whose log ends it has finished, even where the process stopped before recording that (an abandoned
    game stays abandoned)."""
    status = GameStatus(stored)
    if status is GameStatus.WAITING and all(seat.joined for seat in seats):
        status = GameStatus.ACTIVE
    if over and status is not GameStatus.ABANDONED:
        return GameStatus.FINISHED
    return status


class LiveGame:
    """A loaded game. All methods run on the event loop, except the ``replay_*`` helpers (worker threads)."""

    def __init__(
        self,
        services: GameServices,
        row: GameRow,
        state: GameState,
        seats: list[SeatState],
        history: DecisionHistory,
    ) -> None:
        self.services = services
        self.game_id = row.game_id
        self.options = GameOptions(row.players, row.events, row.guild_setup_card, row.mine_setup_card)
        self.seed = row.seed
        self.clock = ClockConfig.from_json(row.clock)
        self.label = row.label
        self.created_at = row.created_at
        self.updated_at = row.updated_at or row.created_at
        self.game_token_hash = row.game_token_hash
        self.rules_version = row.rules_version
        self.components_hash = row.components_hash
        self.abandon_reason = row.abandon_reason
        self.state = state
        self.seats = seats
        self.history = history
        self.status = loaded_status(row.status, seats, state.over)
        self.lock = asyncio.Lock()
        self.listener: GameListener | None = None
        self._subscribers = Subscribers()
        self._timer = TurnTimer()
        self.closed = False
        self.loaded_at = time.time()  # idleness counts from here at the earliest: downtime is not idleness

    # --- identity and status -------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The state version: decisions applied so far."""
        return self.state.version

    @property
    def ended(self) -> bool:
        """Whether the game is finished or abandoned."""
        return self.status.ended

    def replaced(self, seat: int) -> bool:
        """Whether the random policy plays this seat (it resigned, or struck out on the clock)."""
        return replaced(self.seats[seat], self.clock)

    def set_status(self, status: GameStatus) -> None:
        """Change the game's status (stored already) and tell the hub and the listener."""
        old, self.status = self.status, status
        if old != status:
            if status.ended and self.listener is not None:
                self.listener.ended(self._subscribers.playing())
            self.services.on_status(self, old, status)

    # --- credentials ---------------------------------------------------------------------------------

    def check_seat(self, seat: int) -> None:
        """Refuse a seat number outside the game."""
        check_seat(self.game_id, self.seats, seat)

    def authorize(self, seat: int, token: str | None) -> None:
        """Refuse a call for ``seat`` without that seat's token (UNAUTHENTICATED / PERMISSION_DENIED)."""
        authorize_seat(self.game_id, self.seats, seat, token)

    async def authorize_current(self, seat: int, token: str | None) -> None:
        """:meth:`authorize`, first reading seats that another replica may have filled since."""
        try:
            self.authorize(seat, token)
        except ServiceError as error:
            if error.reason != "unauthenticated" or not token or self.services.replicas is None:
                raise
            async with self.lock:
                await self.catch_up("token")
            self.authorize(seat, token)

    def authorize_admin(self, token: str | None, admin_token: str) -> None:
        """Refuse a game-wide action without the game token or the server's admin token."""
        authorize_admin(self.game_id, self.seats, self.game_token_hash, token, admin_token)

    # --- joining, resigning, abandoning --------------------------------------------------------------

    async def join(self, seat: int | None, name: str, sealer: Sealer | None = None) -> tuple[int, str]:
        """Take a seat (the lowest free one when None); returns the seat and its new token. With a
        ``sealer``, the request's record is stored with the seat (:mod:`kutnahora.server.requests`)."""
        async with self.lock:
            await self.catch_up("join")  # another replica may have seated someone
            if self.status is not GameStatus.WAITING:
                raise precondition(
                    f"game {self.game_id} is {self.status}; seats can be joined only while it is waiting",
                    "game_not_active",
                )
            if seat is None:
                free = [s.seat for s in self.seats if not s.joined]
                if not free:
                    raise precondition(f"every seat of game {self.game_id} is taken", "game_full")
                seat = free[0]
            self.check_seat(seat)
            if self.seats[seat].joined:
                raise conflict(f"seat {seat} of game {self.game_id} is taken", "seat_taken")
            updated, token = taken_seat(seat, name, self.seats[seat].bank_ms, time.time())
            record = sealer({"seat": seat, "seat_token": token}) if sealer is not None else None
            await self.services.store.save_seat(self.game_id, seat_row(updated), record)
            self.seats[seat] = updated
            self.updated_at = time.time()
            self.services.log.info("seat joined", game_id=self.game_id, seat=seat, name=name)
            if all(s.joined for s in self.seats):
                try:
                    await self.services.store.set_status(self.game_id, GameStatus.ACTIVE, self.updated_at)
                except StoreError as error:
                    # The seat is stored, and a game with every seat taken is active wherever it is
                    # loaded (see loaded_status), so it starts now all the same.
                    self.services.log.error(
                        "could not store that the game started", game_id=self.game_id, error=str(error)
                    )
                self.set_status(GameStatus.ACTIVE)
                self.services.log.info("game started", game_id=self.game_id, players=len(self.seats))
                self.after_change(everyone=True)
            else:
                self._subscribers.notify()
            return seat, token

    async def resign(self, seat: int, sealer: Sealer | None = None) -> None:
        """Hand a seat to the random policy for the rest of the game (with the request's record, as
        :meth:`join`)."""
        async with self.lock:
            if self.ended:
                raise precondition(
                    f"game {self.game_id} is {self.status}; there is nothing to resign", "game_not_active"
                )
            state = self.seats[seat]
            if state.resigned:
                return
            record = sealer({}) if sealer is not None else None
            await self.services.store.save_seat(self.game_id, replace(seat_row(state), resigned=True), record)
            state.resigned = True  # only once stored: a failed write leaves the seat as it was
            self.updated_at = time.time()
            self.services.metrics.replaced.labels(reason="resigned").inc()
            self.services.log.info("seat resigned", game_id=self.game_id, seat=seat)
            if self.status is GameStatus.ACTIVE:
                self.after_change(new_version=False, everyone=True)
            else:
                self._subscribers.notify()

    async def abandon(self, reason: str) -> None:
        """End the game without a result."""
        async with self.lock:
            if self.ended or not await self._abandon_locked(reason, "request"):
                state = self.status if self.ended else "ended (another server ended it)"
                raise precondition(f"game {self.game_id} is already {state}", "game_not_active")

    def idle_seconds(self, now: float) -> float | None:
        """How long the game has waited for a join, decision or resignation while this server held it;
        None when it cannot idle: ended, or active with a clock (which plays for absent seats)."""
        if self.ended or self.closed or (self.status is GameStatus.ACTIVE and self.clock.enabled):
            return None
        return now - max(self.updated_at, self.loaded_at)

    async def abandon_if_idle(self, idle_timeout: float) -> bool:
        """Abandon the game if it has been idle for ``idle_timeout`` seconds (the hub's limit for its
        status: the waiting timeout while it waits, else the idle timeout); whether it was abandoned.

        Another replica may have seen activity: the game is caught up from the store first."""
        async with self.lock:
            await self.catch_up("idle")
            idle = self.idle_seconds(time.time())
            if idle is None or idle < idle_timeout:
                return False
            waiting = "players to join" if self.status is GameStatus.WAITING else "a decision"
            return await self._abandon_locked(
                f"idle: waited {idle:.0f} s for {waiting} (the limit is {idle_timeout:g} s)", "idle"
            )

    async def _abandon_locked(self, reason: str, why: str) -> bool:
        """Abandon the game (``why``: request or idle, the metric's label); False when the store holds it
        as ended already (another replica ended it first: this one then catches up)."""
        now = time.time()
        store = self.services.store
        if not await store.set_status(
            self.game_id, GameStatus.ABANDONED, now, abandon_reason=reason, unfinished_only=True
        ):
            await self.catch_up("abandon")
            return False
        self._mark_abandoned(reason, why, now)
        return True

    def _mark_abandoned(self, reason: str, why: str, now: float) -> None:
        """The game in memory once its abandonment is stored (or, after an engine fault, tried)."""
        self.abandon_reason = reason
        self.updated_at = now
        self._timer.cancel()
        self.set_status(GameStatus.ABANDONED)
        self.services.metrics.games_ended.labels(status="abandoned").inc()
        self.services.metrics.games_abandoned.labels(reason=why).inc()
        self.services.log.info("game abandoned", game_id=self.game_id, reason=reason)
        self._subscribers.notify()

    # --- decisions -----------------------------------------------------------------------------------

    async def submit(self, seat: int, version: int, answer: Answer) -> AppliedDecision:
        """Apply a seat's answer to the decision at ``version`` (its token already checked): an engine
        option, or the index of one of the options listed at that version.

        An exact retry of a decision already applied returns that decision again and applies nothing.
        """
        async with self.lock:
            if version > self.state.version:
                await self.catch_up("submission")  # another replica may have moved the game on
            current = self.state.version
            if version < current:
                return await self._retry_or_stale(seat, version, answer)
            if version > current:
                raise stale(
                    f"version {version} is ahead of game {self.game_id}, which is at version {current}"
                )
            check_active(self.game_id, self.status, self.seats, self.abandon_reason)
            try:
                pending = engine.owed(self.state, seat)  # the game is over, or another seat owes it
                if self.replaced(seat):
                    raise refuse_replaced(self.seats[seat])
                if isinstance(answer, ListedIndex):
                    option = listed_option(answer, pending)
                else:
                    option = answer
                    engine.check(self.state, option, seat)  # not listed
            except IllegalDecision as error:
                raise engine_refusal(self.game_id, error) from None
            think_ms = self._timer.think_ms()
            record, _ = await self._apply_locked(pending, option, DecisionSource.SEAT, think_ms)
            return record

    async def _retry_or_stale(self, seat: int, version: int, answer: Answer) -> AppliedDecision:
        record = self.history[version]
        if record.seat == seat:
            listed = record.options
            if listed is None and isinstance(answer, ListedIndex):
                listed = await asyncio.to_thread(self.replay_options, version)
            if answered_option(answer, listed or ()) == record.option:
                self.services.log.info(
                    "exact retry answered again", game_id=self.game_id, seat=seat, version=version
                )
                return record
        raise already_answered(self.game_id, self.state.version, version, record)

    async def _apply_locked(
        self, pending: PendingDecision, option: Option, source: DecisionSource, think_ms: int
    ) -> tuple[AppliedDecision, bool]:
        """Store, then apply, one checked decision. The caller holds the lock.

        Returns the applied decision and whether this server stored it: False when another replica
        stored the very same decision first (this one then read it from the store).
        """
        services = self.services
        seat = pending.seat
        version = self.state.version
        text = canonical_text(option)
        applied_at = time.time()
        started = time.perf_counter()
        try:
            await services.store.append_decision(
                self.game_id, DecisionRow(version, seat, text, source, think_ms, applied_at)
            )
        except DuplicateDecision:
            if services.replicas is not None:  # another replica stored decision N first: read it
                await self.catch_up("duplicate")
                if version < len(self.history):
                    recorded = self.history[version]
                    if recorded.seat == seat and recorded.option == option:
                        return recorded, False  # the same decision: an exact retry through another replica
            raise stale(
                f"decision {version} of game {self.game_id} was recorded elsewhere; read the game again"
            ) from None
        except StoreError as error:
            services.log.error("store write failed", game_id=self.game_id, seat=seat, error=str(error))
            raise store_unavailable(
                "the decision could not be stored, so it was not applied; try again"
            ) from None
        services.metrics.store_write.observe(time.perf_counter() - started)
        try:
            events = engine.apply(self.state, option, seat)
        except (
            Exception
        ) as error:  # the option was checked: this is an engine fault, and the game cannot go on
            services.log.exception(
                "engine failed to apply a listed option", game_id=self.game_id, seat=seat, option=text
            )
            await self._abandon_broken(f"engine error at version {version}: {error}")
            raise engine_failed(f"the rules engine failed on {text!r}; the game was abandoned") from None
        record = AppliedDecision(
            version=version,
            seat=seat,
            option=option,
            text=text,
            source=source,
            think_ms=think_ms,
            applied_at=applied_at,
            game_over=self.state.over,
            options=pending.options,
            events=tuple(events),
            kind=pending.kind,
        )
        self.remember(record)
        charge_clock(self.seats[seat], source, think_ms, self.clock)
        self.updated_at = applied_at
        services.metrics.decisions_by_source[source].inc()
        if self.state.over:
            await self._finish()
        self.after_change()
        return record, True

    def remember(self, record: AppliedDecision) -> None:
        """Add an applied decision to the history (the one leaving its detail window drops its details)."""
        self.history.append(record)

    # --- the stored log: replaying it, and catching up with other replicas -------------------------------

    def replay_stored(self, decisions: Sequence[DecisionRow]) -> int:
        """Apply the stored decisions beyond this game's version, in order, as they were applied when stored:
        the one replay of a game's log, for a game loaded from the store (:func:`load`, in a worker thread)
        and for one catching up with other replicas' writes (:meth:`catch_up`). Returns how many it applied.

        Raises :class:`StoreError` when the log does not continue this game (see
        :func:`kutnahora.server.replay.replay_log`); the decisions before the failing one stay applied.
        """
        held = self.state.version
        for record in replay_log(self.game_id, self.state, decisions):
            self.remember(record)
            charge_clock(self.seats[record.seat], record.source, record.think_ms, self.clock)
            self.updated_at = max(self.updated_at, record.applied_at)
        return self.state.version - held

    async def catch_up(self, trigger: str) -> int:
        """Bring the game up to what the store holds, when other replicas share it (else do nothing); the
        caller holds the lock. ``trigger`` names what asked (the metric's label). Returns the number of
        decisions applied. A store that cannot be read, or a log that does not continue this game, is
        logged and leaves the game as it was (with the decisions before the failing one applied)."""
        if self.services.replicas is None:
            return 0
        try:
            return await self.catch_up_locked(trigger)
        except StoreError as error:
            self.services.log.error(
                "replica catch-up failed", game_id=self.game_id, trigger=trigger, error=str(error)
            )
            return 0

    async def catch_up_locked(self, trigger: str) -> int:
        """:meth:`catch_up`, raising :class:`StoreError` (see :meth:`replay_stored`) instead of logging it.

        It applies what another replica wrote: seat joins and resignations (so that a token issued there is
        honoured here), new decisions (:meth:`replay_stored`, exactly as a reload would), and status
        changes; then wakes the subscribers and restarts the pending decision's clock, as after a local
        decision. Decisions applied here are counted as caught up, not as applied (the replica that stored
        them counted them).
        """
        stored = await self.services.store.load_game(self.game_id)
        if stored is None or self.closed:
            return 0
        held = self.state.version
        taken = read_seats(self.seats, stored.seats)
        for row in taken:
            self.updated_at = max(self.updated_at, row.joined_at)
        changed = bool(taken)
        try:
            self.replay_stored(stored.decisions)
        finally:
            applied = self.state.version - held
            if applied:
                changed = True
                if self.services.replicas is not None:
                    self.services.replicas.decisions.inc(applied)
            status = loaded_status(stored.game.status, self.seats, self.state.over)
            if status != self.status:
                self.abandon_reason = stored.game.abandon_reason
                self.updated_at = max(self.updated_at, stored.game.updated_at)
                self.set_status(status)
                changed = True
            if changed:
                self.after_change()
        if self.services.replicas is not None:
            self.services.replicas.catchups.labels(trigger=trigger).inc()
        return applied

    async def _finish(self) -> None:
        result = engine.result(self.state)
        resigned = [s.resigned for s in self.seats]
        data = result_to_json(result, resigned) if result is not None else None
        try:
            await self.services.store.set_status(
                self.game_id, GameStatus.FINISHED, self.updated_at, result=data
            )
        except StoreError as error:  # the log is complete; a reload marks the game finished again
            self.services.log.error(
                "store could not mark the game finished", game_id=self.game_id, error=str(error)
            )
        self.set_status(GameStatus.FINISHED)
        self.services.metrics.games_ended.labels(status="finished").inc()
        self.services.log.info(
            "game finished",
            game_id=self.game_id,
            version=self.state.version,
            scores=list(result.scores) if result else [],
            winners=list(result.winners) if result else [],
        )

    async def _abandon_broken(self, reason: str) -> None:
        now = time.time()
        with contextlib.suppress(StoreError):
            await self.services.store.set_status(
                self.game_id, GameStatus.ABANDONED, now, abandon_reason=reason
            )
        self._mark_abandoned(reason, "engine_error", now)

    # --- clocks and the random policy ----------------------------------------------------------------

    def start(self) -> None:
        """Start the clock of the pending decision (after creation, activation or a reload)."""
        self._start_turn()

    def after_change(self, new_version: bool = True, everyone: bool = False) -> None:
        """Tell the listener, restart the clock and wake the subscribers that the change concerns."""
        pending = self.state.pending
        waiting_seat = None
        if (
            pending is not None
            and not everyone
            and not self.ended
            and self.status is GameStatus.ACTIVE
            and self._subscribers.waiting(pending.seat)
        ):
            waiting_seat = pending.seat
        if self.listener is not None:
            # The change is made already; a failure to present it is left for the streams to meet.
            try:
                self.listener.changed(new_version, waiting_seat)
            except Exception:
                self.services.log.exception("observation could not be built", game_id=self.game_id)
        self._start_turn()
        if everyone or self.ended or pending is None:
            self._subscribers.notify()
        else:
            self._subscribers.notify(pending.seat)

    def _start_turn(self) -> None:
        self._timer.restart()
        if self.status is not GameStatus.ACTIVE or self.closed:
            return
        pending = self.state.pending
        if pending is None:
            return
        version = self.state.version
        if self.replaced(pending.seat):
            delay = self.services.config.policy_delay_seconds
            when = asyncio.get_running_loop().time() + delay
            self._timer.schedule(when, self._automatic, version, DecisionSource.POLICY)
        elif self.clock.enabled:
            allowed = (self.clock.decision_ms + self.seats[pending.seat].bank_ms) / 1000
            self._timer.schedule(
                self._timer.started + allowed, self._automatic, version, DecisionSource.TIMEOUT
            )

    async def _automatic(self, version: int, source: DecisionSource) -> None:
        """Apply the default decision (clock ran out) or the policy's choice, if nothing moved meanwhile."""
        async with self.lock:
            pending = self.state.pending
            if (
                self.closed
                or self.status is not GameStatus.ACTIVE
                or self.state.version != version
                or pending is None
            ):
                return
            seat = pending.seat
            structlog.contextvars.bind_contextvars(
                game_id=self.game_id,
                seat=seat,
                rpc="clock" if source is DecisionSource.TIMEOUT else "policy",
                request_id=uuid.uuid4().hex[:16],
            )
            if source is DecisionSource.TIMEOUT:
                option = default_option(pending.options)
                think_ms = self._timer.think_ms()
            else:
                option = policy_option(self.seed, version, pending.options)
                think_ms = 0
            try:
                _, stored_here = await self._apply_locked(pending, option, source, think_ms)
            except ServiceError as error:
                self.services.log.error(
                    "automatic decision failed",
                    game_id=self.game_id,
                    seat=seat,
                    source=source,
                    error=error.message,
                )
                return
            if not stored_here:  # another replica's clock ran out first and it applied the same decision
                self.services.log.info(
                    "automatic decision already applied by another replica",
                    game_id=self.game_id,
                    seat=seat,
                    source=source,
                )
                return
            if source is DecisionSource.TIMEOUT:
                strikes = self.seats[seat].strikes
                self.services.metrics.timeouts.inc()
                self.services.log.info(
                    "clock ran out; default decision applied",
                    game_id=self.game_id,
                    seat=seat,
                    option=canonical_text(option),
                    strikes=strikes,
                )
                if strikes == self.clock.max_strikes:
                    self.services.metrics.replaced.labels(reason="strikes").inc()
                    self.services.log.info(
                        "seat struck out; the random policy plays it", game_id=self.game_id, seat=seat
                    )

    def clock_reading(self) -> ClockReading | None:
        """The running clock of the pending decision, or None when no clock runs."""
        pending = self.state.pending
        if (
            not self.clock.enabled
            or self.status is not GameStatus.ACTIVE
            or pending is None
            or self.replaced(pending.seat)
        ):
            return None
        return self._timer.reading(pending.seat, self.seats[pending.seat].bank_ms, self.clock)

    # --- subscribers ---------------------------------------------------------------------------------

    def subscribe(self, seat: int | None = None) -> asyncio.Event:
        """An event set when the game changes.

        Without a seat, on every change (new version, status, seats): what watchers need. With a seat,
        only when that seat comes to owe the decision, or on a change of status or seats: what a Play
        stream needs (:class:`kutnahora.server.subscribers.Subscribers`).
        """
        return self._subscribers.subscribe(seat)

    def unsubscribe(self, event: asyncio.Event) -> None:
        """Stop waking ``event``."""
        self._subscribers.unsubscribe(event)

    def close(self) -> None:
        """Stop the game's timers and tasks, wake every subscriber and let go of the listener (server
        shutdown or eviction). The listener (the game's feed) refers back to the game: kept, the two would
        wait for the cycle collector, which the server runs rarely, and every evicted game with them."""
        self.closed = True
        self._timer.close()
        self._subscribers.notify()
        self.listener = None

    # --- what clients read ---------------------------------------------------------------------------

    def result(self) -> GameResult | None:
        """The final result, once finished."""
        if self.status is not GameStatus.FINISHED:
            return None
        return engine.result(self.state)

    def resigned(self) -> list[bool]:
        """Which seats resigned, by seat."""
        return [seat.resigned for seat in self.seats]

    # --- replays in worker threads -------------------------------------------------------------------

    def replay_options(self, version: int) -> tuple[Option, ...]:
        """The options that were listed at ``version`` (rebuilt by replaying the log)."""
        pending = replay_to(self.options, self.seed, self.services.components, self.history, version).pending
        return pending.options if pending is not None else ()

    def replay_events(self, version: int) -> tuple[Event, ...]:
        """The events that decision ``version`` caused (rebuilt by replaying the log)."""
        state = replay_to(self.options, self.seed, self.services.components, self.history, version)
        record = self.history[version]
        return tuple(engine.apply(state, record.option, record.seat))

    def replay_versions(
        self, start: int, stop: int
    ) -> Iterator[tuple[GameState, AppliedDecision | None, tuple[Event, ...]]]:
        """The states of versions ``start`` .. ``stop - 1``, each with the decision that led to it and its
        events (None and none for version 0), rebuilt by replaying the log. The state is shared between
        steps: read it before taking the next."""
        history = self.history[: max(stop - 1, 0)]
        yield from replay_versions(self.options, self.seed, self.services.components, history, start, stop)
