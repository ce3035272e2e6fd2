"""The seats a single-agent environment does not control: the project's bots, played in process.

``random`` chooses uniformly among the legal options straight from the engine (what the ``random`` bot
does, without building a wire observation). Every other name is a bot of
:data:`kutnahora.clients.bots.BOTS` (``greedy``, ``mcts`` or ``mcts:200`` with a budget, and any bot
added there later): those bots read only the wire observation, so :class:`BotOpponent` builds it from
the engine's observation with the server's own presenter
(:func:`kutnahora.server.presenter.observation_to_wire`) and gives the bot the component set as the
server's ``GetComponents`` would. The bot's answer is an index into the listed options, which are the
engine's options in the same order.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Awaitable
from typing import ClassVar, Protocol

from kutnahora.clients.bots import BOTS, is_bot, make_bot
from kutnahora.clients.sdk import Bot, Choice, GameInfo, to_answer
from kutnahora.engine import RULES_VERSION, GameState, Option, legal, observe
from kutnahora.engine.component_cache import ComponentCache
from kutnahora.server.presenter import components_to_wire, observation_to_wire
from kutnahora.v1 import components_pb2, game_pb2


class Opponent(Protocol):
    """A player of one seat that the environment asks for decisions."""

    def start(self, state: GameState, seat: int) -> None:
        """A new game begins, with this player in ``seat``."""

    def choose(self, state: GameState, seat: int) -> Option:
        """One of the legal options of the decision ``seat`` owes in ``state``."""
        ...


class RandomOpponent:
    """Chooses uniformly among the legal options, from its own seeded generator."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def start(self, state: GameState, seat: int) -> None:
        """Nothing to prepare."""

    def choose(self, state: GameState, seat: int) -> Option:
        """A uniformly random legal option."""
        return self.rng.choice(legal(state))


class BotOpponent:
    """One of the project's bots, fed wire observations built from the engine's."""

    _wire: ClassVar[ComponentCache[components_pb2.ComponentSet]] = ComponentCache(components_to_wire)
    """Component sets already converted (a set is immutable and usually the default one)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def start(self, state: GameState, seat: int) -> None:
        """Tell the bot its seat and the component set, as the server does before a game."""
        components = state.components
        wire_components = self._wire.get(components)
        self.bot.start(
            GameInfo(
                game_id="local",
                seat=seat,
                players=len(state.players),
                components=wire_components,
                rules_version=RULES_VERSION,
                summary=game_pb2.GameSummary(),
            )
        )

    def choose(self, state: GameState, seat: int) -> Option:
        """The bot's choice among the listed options."""
        wire = observation_to_wire(observe(state, seat), "local")
        answer = self.bot.choose(wire)
        choice = asyncio.run(_awaited(answer)) if inspect.isawaitable(answer) else answer
        return legal(state)[to_answer(choice, wire).option_index]


async def _awaited(choice: Awaitable[Choice]) -> Choice:
    return await choice


OPPONENTS: tuple[str, ...] = tuple(sorted({"random", *BOTS}))
"""The opponents by name (a search bot's name may carry its budget: ``mcts:200``, ``mcts:500ms``)."""


def make_opponent(name: str, seed: int | None = None) -> Opponent:
    """An opponent by name: ``random``, or any bot :func:`kutnahora.clients.bots.make_bot` knows."""
    if name == "random":
        return RandomOpponent(seed)
    if not is_bot(name):
        raise ValueError(f"unknown opponent {name!r}; choose one of {', '.join(OPPONENTS)} (mcts:200 …)")
    return BotOpponent(make_bot(name, seed))
