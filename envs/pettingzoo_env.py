"""Kutná Hora as a PettingZoo AEC environment with action masks, for 2, 3 or 4 players.

Agents are ``seat_0`` … ``seat_{n-1}``; the agent selected is always the seat that owes the pending
decision (setup choices included), so turns follow the rules, not a fixed rotation. Each agent observes a
dict: ``observation``, its :class:`~kutnahora.learned.encoding.ObservationLayout` vector, and
``action_mask``, 1 at the ids (:class:`~kutnahora.learned.actions.ActionSpace`) of the options it may
choose now (all zeros for an agent that owes nothing). The only rewards are the terminal returns of
:func:`kutnahora.learned.outcome.returns`; every agent terminates together when the game ends.

**An illegal action** follows the convention of PettingZoo's classic games (chess, go, connect four):
:func:`env` wraps the game in PettingZoo's ``TerminateIllegalWrapper``, so an action outside the agent's
mask ends the game at once, the agent that took it rewarded −1 and every other agent 0, all of them
terminated (PettingZoo warns of the illegal move); its test suite (``api_test``, ``seed_test``,
``test_state``, which steps with unmasked random actions) passes on it. The bare :class:`raw_env` is
stricter: an action that is not legal raises ``ValueError`` naming the decision and leaves the game
unchanged, for code that would rather fail loudly.

``reset(seed=s)`` starts the engine's game from a seed drawn from ``s``, so equal seeds give equal games;
later resets without a seed continue that sequence.

``normalized=True`` gives every observation in the normalised form of
:meth:`~kutnahora.learned.encoding.ObservationLayout.encode` (each number divided by its section's documented
scale and clipped, so every entry lies in [0, 1], or [−1, 1] for the signed ones); the default is the game's
own numbers. The declared ``Box`` bounds are those of the form chosen.

The game is played by the engine :func:`kutnahora.native.active_engine` selects when the environment is
made (:mod:`kutnahora.envs.stepping`): the native core when it is built, unless ``KUTNAHORA_ENGINE=python``.
Both give the same games, observations, masks and rewards; the core steps and observes several times faster.

``state()`` is the global state of PettingZoo's API, for a centralised critic: the observation vectors of
every seat, seat 0 first, each in the form chosen (``state_space`` declares it). It holds **hidden
information**: each seat's private parts (the mine tiles it is choosing from, the tile it places, what it
discarded), which no single seat may see; it never holds what no seat sees (stack orders, face-down
events). The engine's own state of the game is :attr:`raw_env.engine` (on the native core, a copy written
out when asked for).

    from kutnahora.envs.pettingzoo_env import env
    game = env(players=3)
    game.reset(seed=1)
    for agent in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        mask = observation["action_mask"]
        action = None if termination or truncation else game.action_space(agent).sample(mask)
        game.step(action)
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from kutnahora.engine import GameOptions, GameState
from kutnahora.engine.components import ComponentSet
from kutnahora.envs.stepping import Game, stepper
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import position_text


class raw_env(AECEnv[str, dict[str, npt.NDArray[Any]], int]):  # type: ignore[misc]
    """The AEC environment itself; :func:`env` wraps it in PettingZoo's order checks."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "kutnahora_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        players: int = 4,
        events: bool = False,
        components: ComponentSet | None = None,
        render_mode: str | None = None,
        normalized: bool = False,
    ) -> None:
        super().__init__()
        if players not in (2, 3, 4):
            raise ValueError(f"Kutná Hora is played by 2, 3 or 4 players, not {players}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.layout = ObservationLayout(components)
        self.space = ActionSpace(self.layout.components)
        self.options = GameOptions(players=players, events=events)
        self.render_mode = render_mode
        self.normalized = normalized
        self.possible_agents = [f"seat_{seat}" for seat in range(players)]
        self.agents = self.possible_agents[:]
        low, high = self.layout.bounds(normalized)
        self.state_space = spaces.Box(np.tile(low, players), np.tile(high, players), dtype=np.float32)
        """The space of :meth:`state`: every seat's observation vector, seat 0 first."""
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.space.size,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = {agent: spaces.Discrete(self.space.size) for agent in self.possible_agents}
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._seeds = random.Random()
        self.stepper = stepper(self.layout, self.space, normalized)
        """Deals and steps the games, on the engine or the native core (:mod:`kutnahora.envs.stepping`)."""
        self.game: Game | None = None
        """The game being played (None before the first reset)."""
        self._ids: list[int] = []

    @property
    def engine(self) -> GameState | None:
        """The engine's state of the game being played (None before the first reset); on the native core
        a copy, written out at each call."""
        return None if self.game is None else self.game.state()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = random.Random(seed)
        self.game = self.stepper.new(self.options, self._seeds.getrandbits(63))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._pose()

    def _pose(self) -> None:
        """Select the agent that owes the pending decision and list its action ids."""
        game = self._game()
        seat = game.seat
        assert seat is not None
        self._ids = game.ids()
        self.agent_selection = self.possible_agents[seat]

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game

    def observe(self, agent: str) -> dict[str, npt.NDArray[Any]]:
        game = self.game or self._game()
        seat = self._seat_of[agent]
        mask = bytearray(self.space.size)
        if game.seat == seat:
            for action in self._ids:
                mask[action] = 1
        return {
            "observation": game.vector(seat),
            "action_mask": np.frombuffer(mask, dtype=np.int8),
        }

    def state(self) -> npt.NDArray[np.float32]:
        """Every seat's observation vector, seat 0 first: a global state holding hidden information.

        Each seat's private parts are in it (see the module's text), so it is for a centralised critic
        during training, never for a policy that acts.
        """
        game = self._game()
        size = self.layout.size
        vector = np.empty(size * len(self.possible_agents), dtype=np.float32)
        for seat in range(len(self.possible_agents)):
            game.vector(seat, vector[seat * size : (seat + 1) * size])
        return vector

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game or self._game()
        if action is None:
            kind = game.kind()
            assert kind is not None
            raise ValueError(f"{agent} owes a decision ({kind.value}); None is not an action")
        try:
            index = self._ids.index(int(action))
        except ValueError:
            pending = game.pending()
            assert pending is not None
            raise ValueError(self.space.refusal(action, pending)) from None
        self._cumulative_rewards[agent] = 0.0
        game.apply(index)
        seat = game.seat
        if seat is not None:  # the next decision: its seat is selected, its ids listed
            self._ids = game.ids()
            self.agent_selection = self.possible_agents[seat]
        else:
            for agent_name, value in zip(self.agents, game.returns(), strict=True):
                self.rewards[agent_name] = value
                self.terminations[agent_name] = True
            self._ids = []
            self._accumulate_rewards()
            self.agent_selection = self.agents[0]

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return position_text(self._game().state())

    def close(self) -> None:
        """Nothing to release."""


def env(**kwargs: Any) -> AECEnv[str, dict[str, npt.NDArray[Any]], int]:
    """The environment wrapped as PettingZoo's classic games are: an illegal action ends the game with
    −1 for the agent that took it, an action outside the space is refused, and the order is checked
    (``reset`` first, no step after the end)."""
    wrapped = wrappers.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
