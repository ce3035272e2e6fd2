"""A game played by the native core, with the engine's API as methods and the engine's values.

:class:`NativeGame` holds the whole state in C++ (``kutnahora_core.Game``) and answers in the engine's
terms: :meth:`~NativeGame.legal` gives the engine's option values, :meth:`~NativeGame.apply` takes one
(and refuses, changing nothing, with the engine's :class:`~kutnahora.engine.game.IllegalDecision` errors),
:meth:`~NativeGame.result` gives a :class:`~kutnahora.engine.game.GameResult`; :meth:`~NativeGame.rollout`
plays the search bot's rollout policies. What the core does not do itself is done by the engine on a copy
of the state in Python (:meth:`~NativeGame.to_state`): the state hash, observations, option costs.
:meth:`~NativeGame.apply` returns the engine's events; ``apply_index`` and ``apply_listed``, for search
and simulation, record none. (Resampling from an observation is
:mod:`kutnahora.native.resampling`.)
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.component_file import default_components
from kutnahora.engine.components import ComponentSet
from kutnahora.engine.events import Event
from kutnahora.engine.game import GameOver, GameResult, NotAnOption, NotYourTurn, state_hash
from kutnahora.engine.options import DecisionKind, Option, PendingDecision, option_text
from kutnahora.engine.setup import check_options
from kutnahora.engine.state import GameOptions, GameState
from kutnahora.native import core_module
from kutnahora.native.convert import FINAL_PARTS, KINDS, from_state, key_of, option_of, seed_words, to_state
from kutnahora.native.events import event_of
from kutnahora.native.tables import component_table


@dataclass(frozen=True, slots=True)
class _Sizes:
    """The core's component tables of one component set, by player count (made once, on first use)."""

    by_players: dict[int, Any]


def _make_sizes(components: ComponentSet) -> _Sizes:
    return _Sizes({})


_sizes: ComponentCache[_Sizes] = ComponentCache(_make_sizes)


def core_components(components: ComponentSet, players: int) -> Any:
    """The core's ``Components`` for a component set and player count (built once and kept)."""
    sizes = _sizes.get(components).by_players
    table = sizes.get(players)
    if table is None:
        table = sizes[players] = core_module().Components(component_table(components, players))
    return table


ROLLOUT_POLICIES = {"heuristic": 0, "random": 1}
"""The search bot's rollout policies the core plays (kutnahora.clients.bots.mcts), by name."""


class NativeGame:
    """One game in the native core: the same game, decision for decision, as the engine's."""

    __slots__ = ("_game", "components", "options", "seed")

    def __init__(self, game: Any, components: ComponentSet, options: GameOptions, seed: int) -> None:
        self._game = game
        self.components = components
        self.options = options
        self.seed = seed

    @classmethod
    def new(cls, options: GameOptions, seed: int, components: ComponentSet | None = None) -> NativeGame:
        """Set up a game as :func:`kutnahora.engine.new_game` does; the first decision is pending."""
        components = components or default_components()
        check_options(options, components)
        table = core_components(components, options.players)
        game = core_module().Game.new(
            table,
            seed_words(seed),
            -1 if options.guild_setup_card is None else options.guild_setup_card,
            -1 if options.mine_setup_card is None else options.mine_setup_card,
            options.uses_events(),
        )
        return cls(game, components, options, seed)

    @classmethod
    def from_state(cls, state: GameState) -> NativeGame:
        """The core playing on from an engine state (which is left as it is)."""
        table = core_components(state.components, state.options.players)
        game = core_module().Game.load(table, from_state(state))
        return cls(game, state.components, state.options, state.seed)

    def clone(self) -> NativeGame:
        """An independent copy."""
        return NativeGame(self._game.clone(), self.components, self.options, self.seed)

    def to_state(self) -> GameState:
        """The engine's state for this game (a copy: changing it does not change this game)."""
        return to_state(self._game.dump(), self.components, self.options, self.seed)

    def encode(self, encoding: Any, viewer: int | None, normalized: bool, out: Any) -> None:
        """Write ``viewer``'s observation vector of this game into ``out`` (a NumPy ``float32`` array of
        the layout's size), by the core's ``encoding`` (built from
        :func:`kutnahora.learned.core_table.encoding_table`): the vector the engine's encoders write of
        :func:`kutnahora.engine.observe` of this game's state, without making that state."""
        seat = -1 if viewer is None else viewer
        self._game.encode(encoding, seat, self.options.uses_events(), normalized, out)

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return bool(self._game.over)

    @property
    def version(self) -> int:
        """Decisions applied so far."""
        return int(self._game.version)

    @property
    def seat(self) -> int | None:
        """The seat that owes the pending decision, or None once the game is over."""
        seat = int(self._game.pending_seat)
        return None if seat < 0 else seat

    def pending(self) -> PendingDecision | None:
        """The pending decision as the engine's value, or None once the game is over."""
        kind = int(self._game.pending_kind)
        if kind < 0:
            return None
        return PendingDecision(int(self._game.pending_seat), KINDS[kind], self.legal())

    def kind(self) -> DecisionKind | None:
        """What the pending decision asks for, or None once the game is over."""
        kind = int(self._game.pending_kind)
        return None if kind < 0 else KINDS[kind]

    def legal(self) -> tuple[Option, ...]:
        """Every legal option, in the engine's order; empty once the game is over."""
        return tuple(option_of(key) for key in self._game.legal_keys())

    def legal_count(self) -> int:
        """How many options the pending decision lists (0 once the game is over)."""
        return int(self._game.legal_count())

    def apply(self, option: Option, seat: int | None = None) -> list[Event]:
        """Apply one legal option (for ``seat``, when given) and return what happened, as the engine's
        :func:`~kutnahora.engine.apply` does; refused as the engine refuses, unchanged."""
        if self._game.over:
            raise GameOver("the game is over; no decision is accepted")
        owed = int(self._game.pending_seat)
        if seat is not None and seat != owed:
            kind = KINDS[int(self._game.pending_kind)]
            raise NotYourTurn(f"seat {owed} owes the next decision ({kind}), not seat {seat}")
        try:
            key = key_of(option)
        except (TypeError, ValueError):
            key = -1
        if key < 0 or key not in self._game.legal_keys():
            kind = KINDS[int(self._game.pending_kind)]
            listed = self.legal()
            shown = ", ".join(option_text(o) for o in listed[:12])
            more = "…" if len(listed) > 12 else ""
            raise NotAnOption(f"{option!r} is not a legal answer to {kind}; legal: {shown}{more}")
        game = self._game
        game.record_events = True
        try:
            game.apply_key(key)
            records = game.events()
        finally:
            game.record_events = False
        return [event_of(self.components, record) for record in records]

    def apply_index(self, index: int) -> None:
        """Apply the option at ``index`` of :meth:`legal` (what a random or searching player calls)."""
        self._game.apply_index(index)

    def playout(self, seed: int) -> int:
        """Play uniformly random options (the core's own generator, from ``seed``) to the end; returns the
        decisions made."""
        return int(self._game.playout(seed))

    def rollout(self, policy: str, rng: random.Random) -> tuple[list[int], list[int]]:
        """Play this game out with the search bot's rollout ``policy`` (``"heuristic"`` or ``"random"``),
        choosing with ``rng`` exactly as the Python policy does (the same draws, so the same game, and
        ``rng`` left in the same state after); returns every seat's final points and the winners."""
        version, words, gauss = rng.getstate()
        after = self._game.rollout(ROLLOUT_POLICIES[policy], words)
        rng.setstate((version, tuple(after), gauss))
        points: list[int] = self._game.points()
        groschen: list[int] = self._game.groschen()
        best = max(zip(points, groschen, strict=True))
        won = [seat for seat, pair in enumerate(zip(points, groschen, strict=True)) if pair == best]
        return points, won

    def apply_listed(self, option: Option) -> None:
        """Apply an option known to be listed (as a search's own choices are): no owner check."""
        self._game.apply_key(key_of(option))

    def points(self) -> tuple[int, ...]:
        """Every seat's points so far (the final scores once the game is over)."""
        return tuple(self._game.points())

    def groschen(self) -> tuple[int, ...]:
        """Every seat's groschen."""
        return tuple(self._game.groschen())

    def result(self) -> GameResult | None:
        """The final result, once the game is over, as :func:`kutnahora.engine.result` gives it."""
        if not self._game.over:
            return None
        points = tuple(self._game.points())
        groschen = tuple(self._game.groschen())
        best = max(zip(points, groschen, strict=True))
        return GameResult(
            scores=points,
            groschen=groschen,
            winners=tuple(s for s, pair in enumerate(zip(points, groschen, strict=True)) if pair == best),
            breakdown=tuple(
                dict(zip(FINAL_PARTS, parts, strict=True)) for parts in self._game.final_scores()
            ),
        )

    def state_hash(self) -> str:
        """The engine's :func:`~kutnahora.engine.game.state_hash` of this game's state."""
        return state_hash(self.to_state())


def rollout(state: GameState, policy: str, rng: random.Random) -> tuple[list[int], list[int]]:
    """Play ``state`` out in the core with the search bot's rollout ``policy``, choosing with ``rng``
    exactly as the Python policy does (the same draws, so the same game, and ``rng`` left in the same state
    after); returns every seat's final points and the winners. ``state`` itself is not changed."""
    return NativeGame.from_state(state).rollout(policy, rng)
