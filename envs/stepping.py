"""The game a learning environment steps: the pure engine's or the native core's, behind one interface.

The environments (PettingZoo, Gymnasium, OpenSpiel) play through a :class:`Stepper`, made once per
environment by :func:`stepper` for the engine :func:`kutnahora.native.active_engine` selects
(``KUTNAHORA_ENGINE``: the native core when it is built, unless it says ``python``). A stepper deals
games (:meth:`Stepper.new`, :meth:`Stepper.load`); a game answers the few questions an environment asks:
who owes the decision, its options and their action ids, apply one by its index, the observation vector
of a seat (as NumPy ``float32`` or as OpenSpiel's list), the returns at the end.

- :class:`EngineGame` is the engine's :class:`~kutnahora.engine.GameState`, observed by the adapters'
  :class:`~kutnahora.learned.state_encoding.StateEncoder`.
- :class:`CoreGame` is a :class:`~kutnahora.native.game.NativeGame`: the core applies the decisions and
  writes the observation vector itself (``native/core/src/encode.cpp``, the same entries and ``float32``
  values as the encoder's, from the layout's offsets given here); the engine's state is written out only
  when asked for (:meth:`CoreGame.state`: rendering, bots that read the wire observation, strings).

Either way the same seed deals the same game and every observation, mask, reward and ending is the same
(``tests/envs/test_engines.py`` plays seeded episodes both ways and compares them).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kutnahora.engine import GameOptions, GameState, Option, apply, clone, new_game
from kutnahora.engine.options import DecisionKind, PendingDecision
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.core_table import encoding_arguments
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import ranked_returns, returns
from kutnahora.learned.state_encoding import ListEncoder, StateEncoder
from kutnahora.native import NATIVE, active_engine, core_module
from kutnahora.native.convert import KINDS

Vector = npt.NDArray[np.float32]


class Game(Protocol):
    """One game an environment steps (see the module's text)."""

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        ...

    @property
    def seat(self) -> int | None:
        """The seat owing the pending decision, None once the game is over."""
        ...

    @property
    def version(self) -> int:
        """Decisions applied so far."""
        ...

    def kind(self) -> DecisionKind | None:
        """What the pending decision asks for, None once the game is over."""
        ...

    def options(self) -> tuple[Option, ...]:
        """The pending decision's options, in the engine's order (empty once over)."""
        ...

    def pending(self) -> PendingDecision | None:
        """The pending decision as the engine's value."""
        ...

    def count(self) -> int:
        """How many options the pending decision lists (0 once the game is over)."""
        ...

    def ids(self) -> list[int]:
        """The action ids of the options, in their order."""
        ...

    def sorted_ids(self) -> list[int]:
        """The action ids of the options, in ascending order (a new list)."""
        ...

    def drawn(self) -> list[int]:
        """The mine tiles drawn for the pending choice."""
        ...

    def apply(self, index: int) -> None:
        """Apply the option at ``index`` of :meth:`options`."""
        ...

    def apply_option(self, option: Option) -> None:
        """Apply an option, refused (changing nothing) as the engine refuses an illegal one."""
        ...

    def vector(self, viewer: int | None, out: Vector | None = None) -> Vector:
        """The viewer's observation vector (None: a spectator's), new or written into ``out``."""
        ...

    def tensor(self, viewer: int | None) -> list[float]:
        """The viewer's observation vector as a new list (OpenSpiel's tensors)."""
        ...

    def returns(self) -> list[float]:
        """Every seat's terminal return (zeros while the game runs)."""
        ...

    def scores(self) -> tuple[int, ...]:
        """Every seat's points so far."""
        ...

    def state(self) -> GameState:
        """The engine's state of the game: the game itself for the engine, a copy for the core."""
        ...

    def clone(self) -> Game:
        """An independent copy."""
        ...


class Stepper(Protocol):
    """Deals the games of one environment, on one engine, observed in one form."""

    engine: str
    """``"python"`` or ``"native"``."""

    def new(self, options: GameOptions, seed: int) -> Game:
        """A new game, as :func:`kutnahora.engine.new_game` deals it."""
        ...

    def load(self, state: GameState) -> Game:
        """A game playing on from an engine state (which the game may keep and change, for the engine)."""
        ...


class _EngineKit:
    """What the engine's games of one environment share: the encoders and the action space."""

    __slots__ = ("_lists", "encoder", "layout", "normalized", "space")

    def __init__(self, layout: ObservationLayout, space: ActionSpace, normalized: bool) -> None:
        self.layout = layout
        self.space = space
        self.normalized = normalized
        self.encoder = StateEncoder(layout, normalized)
        self._lists: ListEncoder | None = None

    @property
    def lists(self) -> ListEncoder:
        if self._lists is None:
            self._lists = ListEncoder(self.layout, self.normalized)
        return self._lists


class EngineGame:
    """The engine's game state, stepped and observed in Python."""

    __slots__ = ("_ids", "_kit", "_state")

    def __init__(self, state: GameState, kit: _EngineKit) -> None:
        self._state = state
        self._kit = kit
        self._ids: list[int] | None = None

    @property
    def over(self) -> bool:
        return self._state.over

    @property
    def seat(self) -> int | None:
        pending = self._state.pending
        return None if pending is None else pending.seat

    @property
    def version(self) -> int:
        return self._state.version

    def kind(self) -> DecisionKind | None:
        pending = self._state.pending
        return None if pending is None else pending.kind

    def options(self) -> tuple[Option, ...]:
        pending = self._state.pending
        return () if pending is None else pending.options

    def pending(self) -> PendingDecision | None:
        return self._state.pending

    def count(self) -> int:
        pending = self._state.pending
        return 0 if pending is None else len(pending.options)

    def ids(self) -> list[int]:
        ids = self._ids
        if ids is None:
            ids = self._ids = self._kit.space.ids(self.options())
        return ids

    def sorted_ids(self) -> list[int]:
        return sorted(self.ids())

    def drawn(self) -> list[int]:
        return list(self._state.drawn)

    def apply(self, index: int) -> None:
        pending = self._state.pending
        if pending is None:
            raise ValueError("the game is over; no decision is accepted")
        apply(self._state, pending.options[index])
        self._ids = None

    def apply_option(self, option: Option) -> None:
        apply(self._state, option)
        self._ids = None

    def vector(self, viewer: int | None, out: Vector | None = None) -> Vector:
        return self._kit.encoder.encode(self._state, viewer, out)

    def tensor(self, viewer: int | None) -> list[float]:
        return self._kit.lists.encode(self._state, viewer)

    def returns(self) -> list[float]:
        return returns(self._state)

    def scores(self) -> tuple[int, ...]:
        return tuple(p.points for p in self._state.players)

    def state(self) -> GameState:
        return self._state

    def clone(self) -> EngineGame:
        return EngineGame(clone(self._state), self._kit)


class EngineStepper:
    """Deals the engine's games."""

    engine = "python"

    def __init__(self, layout: ObservationLayout, space: ActionSpace, normalized: bool = False) -> None:
        self._kit = _EngineKit(layout, space, normalized)

    def new(self, options: GameOptions, seed: int) -> EngineGame:
        return EngineGame(new_game(options, seed, self._kit.layout.components), self._kit)

    def load(self, state: GameState) -> EngineGame:
        return EngineGame(state, self._kit)


class _CoreKit:
    """What the core's games of one environment share: the core's encoding and the action ids by key."""

    __slots__ = ("encoding", "ids", "normalized", "size")

    def __init__(self, layout: ObservationLayout, space: ActionSpace, normalized: bool) -> None:
        from kutnahora.native.convert import key_of

        core = core_module()
        self.normalized = normalized
        self.size = layout.size
        self.encoding = core.Encoding(*encoding_arguments(layout))
        self.ids = core.ActionIds([key_of(space.option_of(i)) for i in range(space.size)])
        """Every action id's option key, which the core turns its options' keys into ids with."""


class CoreGame:
    """A game in the native core, stepped and observed in C++."""

    __slots__ = ("_core", "_events", "_ids", "_kit", "game")

    def __init__(self, game: Any, kit: _CoreKit) -> None:
        from kutnahora.native.game import NativeGame

        self.game: NativeGame = game
        self._core = game._game
        self._kit = kit
        self._events = game.options.uses_events()
        self._ids: list[int] | None = None

    @property
    def over(self) -> bool:
        return bool(self._core.over)

    @property
    def seat(self) -> int | None:
        seat: int = self._core.pending_seat
        return None if seat < 0 else seat

    @property
    def version(self) -> int:
        return int(self._core.version)

    def kind(self) -> DecisionKind | None:
        kind: int = self._core.pending_kind
        return None if kind < 0 else KINDS[kind]

    def options(self) -> tuple[Option, ...]:
        return self.game.legal()

    def pending(self) -> PendingDecision | None:
        return self.game.pending()

    def count(self) -> int:
        return int(self._core.legal_count())

    def ids(self) -> list[int]:
        ids = self._ids
        if ids is None:
            ids = self._ids = self._core.legal_ids(self._kit.ids)
        return ids

    def sorted_ids(self) -> list[int]:
        return sorted(self.ids())

    def drawn(self) -> list[int]:
        drawn: list[int] = self._core.drawn
        return drawn

    def apply(self, index: int) -> None:
        self._core.apply_index(index)
        self._ids = None

    def apply_option(self, option: Option) -> None:
        self.game.apply(option)
        self._ids = None

    def vector(self, viewer: int | None, out: Vector | None = None) -> Vector:
        kit = self._kit
        if out is None:
            out = np.empty(kit.size, dtype=np.float32)
        self._core.encode(kit.encoding, -1 if viewer is None else viewer, self._events, kit.normalized, out)
        return out

    def tensor(self, viewer: int | None) -> list[float]:
        kit = self._kit
        tensor: list[float] = self._core.encode_list(
            kit.encoding, -1 if viewer is None else viewer, self._events, kit.normalized
        )
        return tensor

    def returns(self) -> list[float]:
        core = self._core
        if not core.over:
            return [0.0] * self.game.options.players
        return ranked_returns(list(zip(core.points(), core.groschen(), strict=True)))

    def scores(self) -> tuple[int, ...]:
        return tuple(self._core.points())

    def state(self) -> GameState:
        return self.game.to_state()

    def clone(self) -> CoreGame:
        copy = CoreGame(self.game.clone(), self._kit)
        copy._ids = self._ids
        return copy


class CoreStepper:
    """Deals the native core's games."""

    engine = NATIVE

    def __init__(self, layout: ObservationLayout, space: ActionSpace, normalized: bool = False) -> None:
        self._components = layout.components
        self._kit = _CoreKit(layout, space, normalized)

    def new(self, options: GameOptions, seed: int) -> CoreGame:
        from kutnahora.native.game import NativeGame

        return CoreGame(NativeGame.new(options, seed, self._components), self._kit)

    def load(self, state: GameState) -> CoreGame:
        from kutnahora.native.game import NativeGame

        return CoreGame(NativeGame.from_state(state), self._kit)


def stepper(layout: ObservationLayout, space: ActionSpace, normalized: bool = False) -> Stepper:
    """The stepper of the engine ``KUTNAHORA_ENGINE`` selects (:func:`kutnahora.native.active_engine`)."""
    if active_engine() == NATIVE:
        return CoreStepper(layout, space, normalized)
    return EngineStepper(layout, space, normalized)
