"""Games played in process between seats that each choose with a function: the learning network's seats,
the bots as seats, one game to its end, and the evaluations of a network against a bot with Wilson
intervals (what ``kutnahora-train`` runs every few iterations and what a match reports).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kutnahora.clients.tournament.stats import wilson
from kutnahora.engine import GameOptions, GameState, Option, apply, new_game, observe
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import returns
from kutnahora.learned.state_encoding import StateEncoder

SeatPlayer = Callable[[GameState, int], Option]
"""A player of a seat in process: the option it takes in a state where it owes the decision."""


class NetPlayer:
    """A NumPy network playing a seat: the most likely legal option, or one drawn from the policy."""

    def __init__(
        self,
        net: network.PolicyValueNet,
        encoder: StateEncoder | None,
        space: ActionSpace,
        sample: bool,
        seed: int,
    ) -> None:
        """``encoder`` writes the vectors for a call with the engine's state; a player given none is asked
        by :meth:`index` only."""
        self.net, self.encoder, self.space, self.sample = net, encoder, space, sample
        self.rng = np.random.default_rng(seed)

    def __call__(self, state: GameState, seat: int) -> Option:
        assert state.pending is not None and self.encoder is not None
        options = state.pending.options
        return options[self.index(self.encoder.encode(state, seat), self.space.ids(options))]

    def index(self, vector: npt.NDArray[np.float32], ids: list[int]) -> int:
        """The index among the listed options (whose action ids are ``ids``) of the one the network plays
        from the seat's observation ``vector``, however the vector was written (the engine's encoder or
        the native core)."""
        probs, _ = self.net.policy_value(vector, ids)
        return int(self.rng.choice(len(ids), p=probs / probs.sum())) if self.sample else int(probs.argmax())


def bot_player(name: str, seed: int) -> SeatPlayer:
    """A built-in bot (``random``, ``greedy``, ``mcts:N``) as a seat player, fed the engine's observation
    where it reads one (the search bot) and the wire observation otherwise."""
    if name.startswith("mcts"):
        from kutnahora.clients.bots import make_bot
        from kutnahora.clients.bots.mcts import MctsBot

        bot = make_bot(name, seed)
        assert isinstance(bot, MctsBot)
        return lambda state, seat: bot.decide(observe(state, seat))
    from kutnahora.envs.opponents import make_opponent, started_once

    return started_once(make_opponent(name, seed))


def play_game(players: Sequence[SeatPlayer], seed: int) -> list[float]:
    """One game with one player per seat; each seat's return."""
    state = new_game(GameOptions(players=len(players)), seed)
    while state.pending is not None:
        options = state.pending.options
        seat = state.pending.seat
        apply(state, options[0] if len(options) == 1 else players[seat](state, seat))
    return returns(state)


def evaluate(
    net: network.PolicyValueNet,
    opponent: str,
    players: int,
    games: int,
    sample: bool,
    seed: int,
) -> dict[str, Any]:
    """The network's policy at one seat (rotating over the seats) against ``opponent`` at every other
    seat (see :func:`match`)."""
    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    encoder = StateEncoder(layout, normalized=True)
    policy = "sampled" if sample else "deterministic"
    return match(
        lambda game: NetPlayer(net, encoder, space, sample, seed + game),
        policy,
        opponent,
        players,
        games,
        seed,
    )


def match(
    player: Callable[[int], SeatPlayer],
    policy: str,
    opponent: str,
    players: int,
    games: int,
    seed: int,
) -> dict[str, Any]:
    """``player(game)`` at one seat (rotating over the seats) against ``opponent`` at every other seat:
    wins (a sole first place), ties and losses, the mean return, and the win rate's Wilson interval."""
    wins = ties = 0
    total = 0.0
    for game in range(games):
        seat = game % players
        seats: list[SeatPlayer] = [bot_player(opponent, seed * 1000 + game * 10 + s) for s in range(players)]
        seats[seat] = player(game)
        result = play_game(seats, seed + game)
        returns_of_seat = result[seat]
        total += returns_of_seat
        wins += returns_of_seat == 1.0
        ties += returns_of_seat < 1.0 and returns_of_seat == max(result)
    low, high = wilson(wins, games)
    return {
        "opponent": opponent,
        "players": players,
        "policy": policy,
        "games": games,
        "wins": wins,
        "ties": ties,
        "win_rate": wins / games,
        "wilson95": [round(low, 4), round(high, 4)],
        "mean_return": round(total / games, 4),
    }
