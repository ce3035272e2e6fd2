"""The seats a single-agent environment does not control: the project's bots, played in process.

``random`` chooses uniformly among the legal options straight from the engine (what the ``random`` bot
does, without building a wire observation). Every other name is a bot of
:data:`kutnahora.clients.bots.BOTS` (``greedy``, ``mcts`` or ``mcts:200`` with a budget, and any bot
added there later): those bots read only the wire observation, so :class:`BotOpponent` hands them the
very observation the server sends that seat (:class:`kutnahora.wire.seat_observation.SeatObserver`: the
options' descriptions and costs, the card halves not offered and why, the open mine squares and plots
with their prices) and the component set as the server's ``GetComponents`` would. A bot named here plays
exactly as it plays over gRPC (a test plays the same seeded games both ways). The bot's answer is an
index into the listed options, which are the engine's options in the same order.

A **policy** plays a seat the way a learning agent does: from that seat's observation vector
(:class:`~kutnahora.learned.encoding.ObservationLayout`, raw or normalised as the environment gives it)
and the mask of its legal action ids (:class:`~kutnahora.learned.actions.ActionSpace`).
:class:`PolicyOpponent` accepts a callable ``policy(observation, action_mask) -> action id`` or an
object with Stable-Baselines3's ``predict(observation, action_masks=mask)`` (which returns the action,
or the action and a recurrent state); an id outside the mask is refused with ``ValueError``. An object
with ``start`` and ``choose`` is taken as an :class:`Opponent` itself.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kutnahora.clients.bots import BOTS, is_bot, make_bot
from kutnahora.clients.sdk import Bot, Choice, GameInfo, to_answer
from kutnahora.engine import RULES_VERSION, GameState, Option, legal
from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.options import PendingDecision
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.state_encoding import StateEncoder
from kutnahora.v1 import components_pb2, game_pb2
from kutnahora.wire import components_to_wire
from kutnahora.wire.seat_observation import SeatObserver


@runtime_checkable
class Opponent(Protocol):
    """A player of one seat that the environment asks for decisions."""

    def start(self, state: GameState, seat: int) -> None:
        """A new game begins, with this player in ``seat``."""

    def choose(self, state: GameState, seat: int) -> Option:
        """One of the legal options of the decision ``seat`` owes in ``state``."""
        ...


@runtime_checkable
class Predictor(Protocol):
    """A policy object in Stable-Baselines3's manner (``MaskablePPO`` and its loaded copies)."""

    def predict(self, observation: Any, *args: Any, **kwargs: Any) -> Any:
        """The action for an observation (with ``action_masks=``), or the action and a recurrent state."""
        ...


Policy = Callable[[npt.NDArray[np.float32], npt.NDArray[np.int8]], Any] | Predictor
"""A policy: a callable ``(observation, action_mask) -> action id``, or an object with ``predict``."""
OpponentSpec = str | Policy | Opponent
"""What may play a seat: a bot's name, a policy, or an :class:`Opponent`."""


class PolicyOpponent:
    """A policy playing a seat from that seat's observation vector and legal-action mask."""

    def __init__(
        self, policy: Policy, layout: ObservationLayout, space: ActionSpace, normalized: bool = False
    ) -> None:
        self.policy = policy
        self.layout = layout
        self.space = space
        self.normalized = normalized
        self._encoder = StateEncoder(layout, normalized)

    def start(self, state: GameState, seat: int) -> None:
        """Nothing to prepare: a policy sees each position afresh."""

    def choose(self, state: GameState, seat: int) -> Option:
        """The option whose id the policy chooses; ``ValueError`` for an id that is not legal."""
        pending = state.pending
        if pending is None or pending.seat != seat:
            raise ValueError(f"seat {seat} owes no decision")
        ids = self.space.ids(pending.options)
        return pending.options[self.index(self._encoder.encode(state, seat), ids, seat, lambda: pending)]

    def index(
        self,
        vector: npt.NDArray[np.float32],
        ids: list[int],
        seat: int,
        pending: Callable[[], PendingDecision | None],
    ) -> int:
        """The index among the listed options (whose action ids are ``ids``) of the one the policy chooses
        from the seat's observation ``vector``; ``ValueError`` for an id that is not legal (``pending``
        gives the decision, to say so)."""
        mask = np.zeros(self.space.size, dtype=np.int8)
        mask[ids] = 1
        if isinstance(self.policy, Predictor):
            answer = self.policy.predict(vector, action_masks=mask, deterministic=True)
            action = answer[0] if isinstance(answer, tuple) else answer
        else:
            action = self.policy(vector, mask)
        try:
            chosen = int(np.asarray(action).reshape(-1)[0])
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"the policy of seat {seat} answered {action!r}, not an action id") from None
        if not 0 <= chosen < self.space.size or not mask[chosen]:
            decision = pending()
            assert decision is not None
            raise ValueError(f"the policy of seat {seat} chose {self.space.refusal(chosen, decision)}")
        return ids.index(chosen)


class RandomOpponent:
    """Chooses uniformly among the legal options, from its own seeded generator."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def start(self, state: GameState, seat: int) -> None:
        """Nothing to prepare."""

    def choose(self, state: GameState, seat: int) -> Option:
        """A uniformly random legal option."""
        return self.rng.choice(legal(state))

    def index(self, count: int) -> int:
        """The index of a uniformly random one of ``count`` listed options: the very draw :meth:`choose`
        makes for a decision listing ``count`` options."""
        return self.rng.randrange(count)


class BotOpponent:
    """One of the project's bots, fed the observations the server would send its seat."""

    _wire: ClassVar[ComponentCache[components_pb2.ComponentSet]] = ComponentCache(components_to_wire)
    """Component sets already converted (a set is immutable and usually the default one)."""

    def __init__(self, bot: Bot, game_id: str = "local") -> None:
        self.bot = bot
        self.observer = SeatObserver(game_id)

    def start(self, state: GameState, seat: int) -> None:
        """Tell the bot its seat and the component set, as the server does before a game."""
        self.observer.reset()
        components = state.components
        wire_components = self._wire.get(components)
        self.bot.start(
            GameInfo(
                game_id=self.observer.game_id,
                seat=seat,
                players=len(state.players),
                components=wire_components,
                rules_version=RULES_VERSION,
                summary=game_pb2.GameSummary(),
            )
        )

    def choose(self, state: GameState, seat: int) -> Option:
        """The bot's choice among the listed options."""
        wire = self.observer.observe(state, seat)
        answer = self.bot.choose(wire)
        choice = asyncio.run(_awaited(answer)) if inspect.isawaitable(answer) else answer
        return legal(state)[to_answer(choice, wire).option_index]


async def _awaited(choice: Awaitable[Choice]) -> Choice:
    return await choice


def started_once(opponent: Opponent) -> Callable[[GameState, int], Option]:
    """A function deciding for ``opponent`` in any seat of one game, which starts it the first time it
    plays each seat (as a server would before the game)."""
    started: set[int] = set()

    def play(state: GameState, seat: int) -> Option:
        if seat not in started:
            opponent.start(state, seat)
            started.add(seat)
        return opponent.choose(state, seat)

    return play


OPPONENTS: tuple[str, ...] = tuple(sorted({"random", *BOTS}))
"""The opponents by name (a search bot's name may carry its budget: ``mcts:200``, ``mcts:500ms``)."""


def make_opponent(
    name: OpponentSpec,
    seed: int | None = None,
    layout: ObservationLayout | None = None,
    space: ActionSpace | None = None,
    normalized: bool = False,
) -> Opponent:
    """An opponent: by name (``random``, or any bot :func:`kutnahora.clients.bots.make_bot` knows), for a
    policy (observing with ``layout`` and ``space``, in the raw or normalised form), or an
    :class:`Opponent` as it is."""
    if not isinstance(name, str):
        if isinstance(name, Opponent):
            return name
        if isinstance(name, Predictor) or callable(name):
            layout = layout or ObservationLayout()
            return PolicyOpponent(name, layout, space or ActionSpace(layout.components), normalized)
        raise TypeError(
            f"an opponent is a bot's name, a callable (observation, action_mask) -> action id, an object "
            f"with predict(observation, action_masks=...), or an Opponent; not {type(name).__name__}"
        )
    if name == "random":
        return RandomOpponent(seed)
    if not is_bot(name):
        raise ValueError(f"unknown opponent {name!r}; choose one of {', '.join(OPPONENTS)} (mcts:200 …)")
    return BotOpponent(make_bot(name, seed))
