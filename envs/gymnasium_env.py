"""Kutná Hora as a single-agent Gymnasium environment: the agent plays one seat, bots play the others.

The agent's seat is ``seat`` (default 0); the other seats are played by ``opponents`` (one for all, or one
per other seat in turn order). An opponent is a bot's name (``random``, ``greedy``, ``mcts``, ``mcts:100``
for 100 iterations a decision, or any bot of :data:`kutnahora.clients.bots.BOTS`), or a **policy**: a
callable ``policy(observation, action_mask) -> action id``, or an object with Stable-Baselines3's
``predict(observation, action_masks=mask)`` (a MaskablePPO model, live or loaded from a file). A policy
sees its own seat's observation vector, in this environment's form, and the mask of its legal ids, exactly
as the agent does; so the agent's own policy, or a frozen copy of it, can play the other seats
(self-play). :meth:`KutnaHoraEnv.set_opponents` changes the opponents between episodes (see
:mod:`kutnahora.envs.opponents`). ``step`` applies the agent's decision, then lets the opponents decide until
the agent owes the next decision or the game ends.

``normalized=True`` gives observations in the normalised form of
:meth:`~kutnahora.learned.encoding.ObservationLayout.encode` (every entry in [0, 1], or [−1, 1] where signed);
the default is the game's own numbers. The declared ``Box`` bounds are those of the form chosen.

Observations are a dict like PettingZoo's: ``observation`` (the seat's
:class:`~kutnahora.learned.encoding.ObservationLayout` vector) and ``action_mask`` (the legal ids of
:class:`~kutnahora.learned.actions.ActionSpace`); :meth:`KutnaHoraEnv.action_masks` returns the mask alone,
as maskable policy learners ask for it. The reward is 0 until the end, then the seat's return from
:func:`kutnahora.learned.outcome.returns`.

The game is played by the engine :func:`kutnahora.native.active_engine` selects when the environment is
made (:mod:`kutnahora.envs.stepping`): the native core when it is built, unless ``KUTNAHORA_ENGINE=python``.
Both give the same games, observations, masks and rewards. ``random`` opponents and policies play on the
core directly; a bot reads the wire observation, made from the engine's state written out for its turn.
:attr:`KutnaHoraEnv.state` is the engine's state of the game (on the core, a copy written out when asked).

An action that is not legal now ends the episode as a loss (reward −1, ``terminated``, and
``info["illegal_action"]`` says which decision it failed), the convention of environments with a fixed
action space whose agent may ignore the mask. With ``illegal_action="raise"`` it raises ``ValueError``
instead and changes nothing.

    import gymnasium
    import kutnahora.envs.gymnasium_env  # registers "KutnaHora-v0"
    env = gymnasium.make("KutnaHora-v0", players=3, opponents="greedy")
    observation, info = env.reset(seed=1)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Literal

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from kutnahora.engine import GameOptions, GameState
from kutnahora.engine.components import ComponentSet
from kutnahora.envs.opponents import Opponent, OpponentSpec, PolicyOpponent, RandomOpponent, make_opponent
from kutnahora.envs.stepping import Game, stepper
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import position_text

Observation = dict[str, npt.NDArray[Any]]


class KutnaHoraEnv(gymnasium.Env[Observation, np.int64]):
    """One seat of a Kutná Hora game against the project's bots."""

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 - gymnasium.Env declares it an instance variable

    def __init__(
        self,
        players: int = 4,
        seat: int = 0,
        opponents: OpponentSpec | Sequence[OpponentSpec] = "random",
        events: bool = False,
        components: ComponentSet | None = None,
        illegal_action: Literal["lose", "raise"] = "lose",
        render_mode: str | None = None,
        normalized: bool = False,
    ) -> None:
        if players not in (2, 3, 4):
            raise ValueError(f"Kutná Hora is played by 2, 3 or 4 players, not {players}")
        if not 0 <= seat < players:
            raise ValueError(f"seat must be 0..{players - 1}, not {seat}")
        if illegal_action not in ("lose", "raise"):
            raise ValueError(f"illegal_action must be 'lose' or 'raise', not {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.layout = ObservationLayout(components)
        self.space = ActionSpace(self.layout.components)
        self.options = GameOptions(players=players, events=events)
        self.seat = seat
        self.normalized = normalized
        self._others = [s for s in range(players) if s != seat]
        self.game: Game | None = None
        """The game being played (None before the first reset)."""
        self.stepper = stepper(self.layout, self.space, normalized)
        """Deals and steps the games, on the engine or the native core (:mod:`kutnahora.envs.stepping`)."""
        self.opponent_specs: list[OpponentSpec] = []
        self.opponents: dict[int, Opponent] = {}
        self.set_opponents(opponents)
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        low, high = self.layout.bounds(normalized)
        self.observation_space = spaces.Dict(  # type: ignore[assignment]
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.space.size,), np.int8),
            }
        )
        self.action_space = spaces.Discrete(self.space.size)
        self._seeds = random.Random()
        self._ids: list[int] = []
        self._ended = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._seeds = random.Random(seed)
        game = self.game = self.stepper.new(self.options, self._seeds.getrandbits(63))
        self.opponents = {
            s: self._opponent(spec, self._seeds.getrandbits(63))
            for s, spec in zip(self._others, self.opponent_specs, strict=True)
        }
        started = None
        for s, opponent in self.opponents.items():
            if type(opponent) not in (RandomOpponent, PolicyOpponent):  # these need no state to start
                started = started or game.state()
                opponent.start(started, s)
        self._play_opponents()
        self._ended = game.over
        return self._observation(), self._info()

    def step(self, action: np.int64 | int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        game = self._game()
        if self._ended:
            raise RuntimeError("the episode has ended: call reset() to start another")
        try:
            index = self._ids.index(int(action))
        except ValueError:
            pending = game.pending()
            assert pending is not None
            message = self.space.refusal(action, pending)
            if self.illegal_action == "raise":
                raise ValueError(message) from None
            info = self._info()
            info["illegal_action"] = message
            self._ended = True
            return self._observation(), -1.0, True, False, info
        game.apply(index)
        self._play_opponents()
        over = game.over
        reward = game.returns()[self.seat] if over else 0.0
        self._ended = over
        return self._observation(), reward, over, False, self._info()

    def set_opponents(self, opponents: OpponentSpec | Sequence[OpponentSpec]) -> None:
        """The players of the other seats from the next :meth:`reset` on: one for all, or one per seat.

        A game under way goes on with the opponents it began with.

        Each is a bot's name, a policy (a callable ``(observation, mask) -> id``, or an object with
        ``predict(observation, action_masks=mask)``), or an :class:`~kutnahora.envs.opponents.Opponent`.
        A policy object is used as it is, not copied: pass a frozen copy to play against a past self.
        """
        if isinstance(opponents, str) or not isinstance(opponents, Sequence):
            specs: list[OpponentSpec] = [opponents] * len(self._others)
        else:
            specs = list(opponents)
        if len(specs) != len(self._others):
            raise ValueError(
                f"give one opponent, or {len(self._others)} (one per other seat), not {len(specs)}"
            )
        made = {s: self._opponent(spec) for s, spec in zip(self._others, specs, strict=True)}  # checks them
        if self.game is None:
            self.opponents = made
        self.opponent_specs = specs

    def _opponent(self, spec: OpponentSpec, seed: int | None = None) -> Opponent:
        return make_opponent(spec, seed, self.layout, self.space, self.normalized)

    def action_masks(self) -> npt.NDArray[np.int8]:
        """The legal-action mask of the agent's pending decision (zeros once the game is over)."""
        mask = np.zeros(self.space.size, dtype=np.int8)
        mask[self._ids] = 1
        return mask

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return position_text(self._game().state())

    @property
    def state(self) -> GameState | None:
        """The engine's state of the game (None before the first reset); on the native core a copy, written
        out at each call."""
        return None if self.game is None else self.game.state()

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        return self.game

    def _play_opponents(self) -> None:
        """Let the opponents decide until the agent owes a decision or the game is over."""
        game = self._game()
        seat = game.seat
        while seat is not None and seat != self.seat:
            opponent = self.opponents[seat]
            if type(opponent) is RandomOpponent:  # the same draw as its choose, from the listed options
                game.apply(opponent.index(len(game.ids())))
            elif type(opponent) is PolicyOpponent:  # the seat's vector and ids, as its choose makes them
                game.apply(opponent.index(game.vector(seat), game.ids(), seat, game.pending))
            else:
                game.apply_option(opponent.choose(game.state(), seat))
            seat = game.seat
        self._ids = game.ids() if seat is not None else []

    def _observation(self) -> Observation:
        return {
            "observation": self._game().vector(self.seat),
            "action_mask": self.action_masks(),
        }

    def _info(self) -> dict[str, Any]:
        game = self._game()
        return {"version": game.version, "scores": game.scores()}


gymnasium.register(id="KutnaHora-v0", entry_point="kutnahora.envs.gymnasium_env:KutnaHoraEnv")
