"""The games of one server: create, find (loading from the store when needed), list, recover, evict.

:class:`GameHub` holds every loaded :class:`kutnahora.server.game.LiveGame`. A game that is not loaded is
rebuilt from the store by replaying its log, so any server sharing the store can serve any game. At start the
hub reloads every unfinished game in the background, which restarts their clocks. Finished and abandoned
games stay loaded up to a limit (the least recently used beyond it are dropped and reload on demand).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import grpc

from kutnahora import engine
from kutnahora.engine import GameOptions
from kutnahora.engine.components import ComponentSet
from kutnahora.plumbing import auth
from kutnahora.plumbing.callers import Caller
from kutnahora.plumbing.errors import ServiceError, clip, exhausted, invalid, not_found
from kutnahora.plumbing.quota_store import QuotaStore
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.game import GameServices, LiveGame, check_components, load
from kutnahora.server.history import DecisionHistory
from kutnahora.server.metrics import Metrics
from kutnahora.server.notify import change_feed
from kutnahora.server.quotas import CallerQuotas
from kutnahora.server.records import GameStatus, SeatState
from kutnahora.server.replication import ReplicationMetrics
from kutnahora.server.requests import Sealer
from kutnahora.server.seating import seat_row, taken_seat
from kutnahora.server.store import GameQuery, GameRow, Store, StoreError, result_to_json

MAX_PAGE = 500
DEFAULT_PAGE = 50
MAX_GAME_ID = 64


class GameHub:
    """Every game of one server."""

    def __init__(
        self, config: ServerConfig, store: Store, metrics: Metrics, components: ComponentSet, log: Any
    ) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.log = log
        # The counters of catching up with other replicas are exported by every server; a game catches up
        # only where other replicas share the store (it has a change feed).
        replicas = ReplicationMetrics(metrics.registry)
        self.services = GameServices(
            store,
            metrics,
            config,
            components,
            log,
            on_status=self._on_status,
            replicas=replicas if change_feed(store) is not None else None,
        )
        self.components_hash = engine.components_hash(components)
        quotas = config.quotas
        self.quotas = CallerQuotas(
            quotas.caller_games,
            quotas.caller_rate,
            quotas.caller_burst,
            quotas.exempt,
            (config.admin_token, quotas.token),
            metrics.refused,
            trusted_proxies=quotas.trusted_proxies,
            reads=quotas.caller_reads,
            read_burst=quotas.caller_read_burst,
            streams=quotas.caller_streams,
            store=QuotaStore(
                quotas.store,
                f"{quotas.store_prefix}:server",
                log=log,
                on_error=metrics.quota_store_errors.inc,
            ),
        )
        self.games: dict[str, LiveGame] = {}
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        self._creating = 0
        self._unfinished = 0  # games in memory still waiting or active, kept by _add and _on_status
        self._recovery: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self.started_at = time.time()

    # --- lifecycle -----------------------------------------------------------------------------------

    def start_recovery(self) -> None:
        """Reload every unfinished game in the background (their clocks restart), and start abandoning idle
        games when the configuration asks for it."""
        loop = asyncio.get_running_loop()
        self._recovery = loop.create_task(self.recover())
        config = self.config
        timeouts = [t for t in (config.idle_timeout_seconds, config.waiting_timeout_seconds) if t > 0]
        if timeouts:
            self._sweeper = loop.create_task(self._sweep_idle(min(60.0, min(timeouts) / 4)))

    def idle_limit(self, game: LiveGame) -> float:
        """The seconds after which ``game`` is abandoned when nobody acts on it (0: never): the waiting
        timeout while it waits for players (when set), else the idle timeout."""
        if game.status is GameStatus.WAITING and self.config.waiting_timeout_seconds > 0:
            return self.config.waiting_timeout_seconds
        return self.config.idle_timeout_seconds

    async def _sweep_idle(self, period: float) -> None:
        """Every ``period`` seconds, abandon the games idle past their limit (see :meth:`idle_limit` and
        :meth:`LiveGame.idle_seconds`), so that games nobody plays do not hold places for ever."""
        while True:
            await asyncio.sleep(period)
            await self.sweep_idle()

    async def sweep_idle(self) -> int:
        """Abandon every game idle past its limit now; how many were abandoned."""
        now = time.time()
        due: list[tuple[LiveGame, float]] = []
        for game in self.games.values():
            limit, idle = self.idle_limit(game), game.idle_seconds(now)
            if limit > 0 and idle is not None and idle >= limit:
                due.append((game, limit))
        abandoned = 0
        for game, limit in due:
            try:
                abandoned += await game.abandon_if_idle(limit)
            except Exception:  # the store refused, say: tried again at the next sweep
                self.log.exception("could not abandon an idle game", game_id=game.game_id)
        return abandoned

    async def recover(self) -> None:
        """Reload every unfinished game now."""
        try:
            game_ids = await self.store.unfinished_games()
        except StoreError as error:
            self.log.error("could not list unfinished games", error=str(error))
            return
        loaded = 0
        for game_id in game_ids:
            try:
                await self.get(game_id)
                loaded += 1
            except ServiceError as error:
                self.log.error("could not recover game", game_id=game_id, error=error.message)
        if game_ids:
            self.log.info("recovered unfinished games", games=loaded, failed=len(game_ids) - loaded)

    async def close(self) -> None:
        """Stop every game's clock and wake every stream so that it ends."""
        if self._recovery is not None and not self._recovery.done():
            self._recovery.cancel()
        if self._sweeper is not None:
            self._sweeper.cancel()
        for game in self.games.values():
            game.close()

    # --- creating and finding games ------------------------------------------------------------------

    def unfinished(self) -> int:
        """Games waiting or active in memory (counted as they come and end, not by looking at each)."""
        return self._unfinished

    async def create(
        self,
        options: GameOptions,
        seed: int | None,
        clock: ClockConfig,
        label: str,
        seat_names: Sequence[str] = (),
        sealer: Sealer | None = None,
        caller: Caller | None = None,
    ) -> tuple[LiveGame, str, list[str]]:
        """Create and store a game; returns it, its game token and, when ``seat_names`` names every seat,
        each seat's token: those seats are stored taken with the game, in one step, and the game starts.
        With a ``sealer``, the request's record is stored with the game (:mod:`kutnahora.server.requests`).
        A ``caller`` takes one of its places (:class:`CallerQuotas`) for as long as the game is unfinished;
        refused, or failing, the call leaves nothing stored and the caller's count as it was."""
        if seat_names and len(seat_names) != options.players:
            raise invalid(
                f"seat_names must name every seat: {options.players} names for {options.players} "
                f"players, got {len(seat_names)}"
            )
        if self.unfinished() + self._creating >= self.config.limits.max_games:
            self.metrics.refused.labels(limit="max_games").inc()
            raise exhausted(
                f"the server already holds {self.config.limits.max_games} unfinished games, its limit; "
                "try again when some have ended",
                "max_games",
            )
        if seed is None:
            seed = secrets.randbits(63)
        try:
            state = engine.new_game(options, seed, self.services.components)
        except (engine.SetupError, ValueError, IndexError) as error:
            raise invalid(f"the game cannot be set up with these options: {error}") from None
        place = await self.quotas.reserve(caller) if caller is not None else None
        self._creating += 1
        created = False
        try:
            game_id = secrets.token_hex(8)
            token = auth.new_token()
            now = time.time()
            row = GameRow(
                game_id=game_id,
                created_at=now,
                players=options.players,
                events=options.events,
                guild_setup_card=options.guild_setup_card,
                mine_setup_card=options.mine_setup_card,
                seed=seed,
                clock=clock.to_json(),
                label=label,
                game_token_hash=auth.token_hash(token),
                rules_version=engine.RULES_VERSION,
                status=GameStatus.ACTIVE if seat_names else GameStatus.WAITING,
                updated_at=now,
                components_hash=self.components_hash,
            )
            if seat_names:
                taken = [taken_seat(i, name, clock.bank_ms, now) for i, name in enumerate(seat_names)]
                seats, seat_tokens = [seat for seat, _ in taken], [token for _, token in taken]
            else:
                seats = [SeatState(seat=i, bank_ms=clock.bank_ms) for i in range(options.players)]
                seat_tokens = []
            try:
                record = None
                if sealer is not None:
                    answer = {"game_id": game_id, "game_token": token, "seat_tokens": seat_tokens}
                    record = sealer(answer)
                await self.store.create_game(row, [seat_row(seat) for seat in seats], record)
            except StoreError as error:
                raise ServiceError(
                    grpc.StatusCode.UNAVAILABLE, f"the game could not be stored: {error}", "store_error"
                ) from None
            game = LiveGame(self.services, row, state, seats, DecisionHistory())
            created = True
        finally:
            self._creating -= 1
            if created:
                self.quotas.bind(place, game_id)
            else:
                self.quotas.unreserve(place)
        self._add(game)
        game.start()
        self.metrics.games_created.inc()
        self.log.info("game created", game_id=game_id, players=options.players, label=label)
        if seat_names:
            self.log.info("game started", game_id=game_id, players=options.players, seated="at creation")
        return game, token, seat_tokens

    async def get(self, game_id: str) -> LiveGame:
        """A game, loaded from the store if needed (NOT_FOUND when there is none)."""
        game = self.games.get(game_id)
        if game is not None:
            if game_id in self._ended:
                self._ended.move_to_end(game_id)
            return game
        if not game_id:
            raise invalid("game_id must be set")
        if len(game_id) > MAX_GAME_ID:
            raise not_found(game_id)
        loading = self._loading.get(game_id)
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[LiveGame] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._loading[game_id] = future
        try:
            game = await self._load(game_id)
        except BaseException as error:
            future.set_exception(error)
            raise
        finally:
            del self._loading[game_id]
        future.set_result(game)
        return game

    async def _load(self, game_id: str) -> LiveGame:
        try:
            stored = await self.store.load_game(game_id)
        except StoreError as error:
            self.log.error("store failed", game_id=game_id, error=str(error))
            raise ServiceError(
                grpc.StatusCode.UNAVAILABLE,
                f"game {game_id} could not be read from the game store; try again",
                "store_error",
            ) from None
        if stored is None:
            raise not_found(game_id)
        check_components(stored.game, self.components_hash)
        try:
            game = await load(self.services, stored)
        except (StoreError, ValueError) as error:
            raise ServiceError(
                grpc.StatusCode.INTERNAL,
                f"game {game_id} cannot be rebuilt from its log: {error}",
                "rebuild_failed",
            ) from None
        if game.status is GameStatus.FINISHED and stored.game.status != GameStatus.FINISHED:
            # The process stopped between the last decision and recording the end: record it now.
            result = engine.result(game.state)
            data = None if result is None else result_to_json(result, [s.resigned for s in game.seats])
            await self.store.set_status(game_id, GameStatus.FINISHED, game.updated_at, result=data)
        self._add(game)
        game.start()
        self.log.info("game loaded", game_id=game_id, version=game.version, status=game.status)
        return game

    def _add(self, game: LiveGame) -> None:
        self.games[game.game_id] = game
        self.metrics.games.labels(status=game.status).inc()
        if game.ended:
            self._remember_ended(game.game_id)
        else:
            self._unfinished += 1

    def _on_status(self, game: LiveGame, old: GameStatus, new: GameStatus) -> None:
        if self.games.get(game.game_id) is not game:
            return
        self.metrics.games.labels(status=old).dec()
        self.metrics.games.labels(status=new).inc()
        self._unfinished += old.ended - new.ended
        if new.ended:
            self.quotas.release(game.game_id)
            self._remember_ended(game.game_id)

    def _remember_ended(self, game_id: str) -> None:
        self._ended[game_id] = None
        self._ended.move_to_end(game_id)
        while len(self._ended) > self.config.ended_games_in_memory:
            evicted, _ = self._ended.popitem(last=False)
            game = self.games.pop(evicted, None)
            if game is not None:
                self.metrics.games.labels(status=game.status).dec()
                game.close()  # reference counting frees it once the last call that holds it lets go

    # --- listing -------------------------------------------------------------------------------------

    async def list(
        self, status: GameStatus | None, label: str, page_size: int, page_token: str
    ) -> tuple[list[LiveGame | GameRow], str]:
        """A page of games, newest first (the loaded game where it is loaded, else its store record), and
        the token of the next page ("" on the last)."""
        if page_size < 0:
            raise invalid(f"page_size must not be negative, got {page_size}")
        limit = min(page_size or DEFAULT_PAGE, MAX_PAGE)
        before: tuple[float, str] | None = None
        if page_token:
            created, _, game_id = page_token.partition(":")
            try:
                before = (float(created), game_id)
            except ValueError:
                raise invalid(f"page_token {clip(page_token)!r} is not one this server returned") from None
            if not game_id:
                raise invalid(f"page_token {clip(page_token)!r} is not one this server returned")
        try:
            rows = await self.store.list_games(GameQuery(status, label, limit + 1, before))
        except StoreError as error:
            self.log.error("store failed", error=str(error))
            raise ServiceError(
                grpc.StatusCode.UNAVAILABLE,
                "the games could not be read from the game store; try again",
                "store_error",
            ) from None
        more = len(rows) > limit
        rows = rows[:limit]
        page: list[LiveGame | GameRow] = [self.games.get(row.game_id) or row for row in rows]
        next_token = f"{rows[-1].created_at!r}:{rows[-1].game_id}" if more and rows else ""
        return page, next_token

    def counts(self) -> dict[GameStatus, int]:
        """Loaded games by status."""
        counts = dict.fromkeys(GameStatus, 0)
        for game in self.games.values():
            counts[game.status] = counts.get(game.status, 0) + 1
        return counts
