"""A bot played in process meets the game as it meets it over gRPC: the same observations, the same play.

The environments' opponents, the ladder and training play the project's bots without a server. What they
measure counts only if those bots see exactly what the server sends their seat and so decide exactly as
they decide when a user runs them. Here seeded games are played both ways, through a real
``kutnahora-server`` (each seat a bot on its own Play stream, as ``kutnahora-bot`` plays) and in process,
and compared observation by observation and decision by decision.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import Any

import pytest

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Bot, Choice, Client, GameInfo, GameOutcome, SeatCredentials, to_answer
from kutnahora.engine import GameOptions, apply, new_game
from kutnahora.envs.ladder import seat_player
from kutnahora.envs.opponents import BotOpponent, make_opponent
from kutnahora.v1.game_pb2 import Observation


class Recording(Bot):
    """A bot that keeps every observation it was sent and the index of every option it chose."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.seen: list[Observation] = []
        self.chosen: list[int] = []

    def start(self, info: GameInfo) -> None:
        self.inner.start(info)

    def choose(self, observation: Observation) -> Choice | Awaitable[Choice]:
        answer = self.inner.choose(observation)
        if inspect.isawaitable(answer):
            return self._recorded(observation, answer)
        return self._record(observation, answer)

    async def _recorded(self, observation: Observation, answer: Awaitable[Choice]) -> Choice:
        return self._record(observation, await answer)

    def _record(self, observation: Observation, choice: Choice) -> Choice:
        self.seen.append(observation)
        self.chosen.append(to_answer(choice, observation).option_index)  # type: ignore[arg-type]
        return choice

    def finish(self, outcome: GameOutcome) -> None:
        self.inner.finish(outcome)


def bot_seed(seed: int, seat: int) -> int:
    return seed * 10 + seat


async def served_game(address: str, names: list[str], seed: int) -> tuple[str, list[Recording], list[int]]:
    """A game of ``names`` played through the server, each seat on its own Play stream; its id, the
    seats' recordings and the final scores."""
    recordings = [Recording(make_bot(name, bot_seed(seed, seat))) for seat, name in enumerate(names)]
    async with await Client.connect(address) as client:
        created = await client.create_game(len(names), seed=seed)
        game_id = created.game.game_id
        seats: list[SeatCredentials] = [
            await client.join_game(game_id, seat, name) for seat, name in enumerate(names)
        ]
        outcomes = await asyncio.gather(
            *(client.play(recording, seat) for recording, seat in zip(recordings, seats, strict=True))
        )
    result = outcomes[0].result
    assert result is not None
    scores = [entry.score for entry in sorted(result.seats, key=lambda entry: entry.seat)]
    return game_id, recordings, scores


@pytest.mark.parametrize(
    ("names", "seed"), [(["greedy", "greedy"], 3), (["greedy", "random", "greedy"], 4), (["greedy"] * 4, 5)]
)
async def test_an_opponent_in_process_is_sent_the_servers_observations_and_plays_its_decisions(
    server_address: str, names: list[str], seed: int
) -> None:
    """The environments' :class:`BotOpponent` (what an environment, the ladder and training use for a bot
    named ``greedy``) receives, before every decision, the observation the server's Play stream sends
    that seat, byte for byte (the game id set to the server's), and so chooses the same option."""
    game_id, recordings, served_scores = await served_game(server_address, names, seed)

    opponents = [
        BotOpponent(make_bot(name, bot_seed(seed, seat)), game_id) for seat, name in enumerate(names)
    ]
    state = new_game(GameOptions(players=len(names)), seed)
    for seat, opponent in enumerate(opponents):
        opponent.start(state, seat)
    asked = [0] * len(names)
    while state.pending is not None:
        seat = state.pending.seat
        observation = opponents[seat].observer.observe(state, seat)
        served = recordings[seat].seen[asked[seat]]
        assert observation.SerializeToString(deterministic=True) == served.SerializeToString(
            deterministic=True
        ), f"seat {seat}'s observation at version {observation.version} differs from the server's"
        option = opponents[seat].choose(state, seat)
        assert state.pending.options.index(option) == recordings[seat].chosen[asked[seat]]
        asked[seat] += 1
        apply(state, option)
    assert asked == [len(recording.seen) for recording in recordings]  # every observation compared
    assert [player.points for player in state.players] == served_scores
    # the served observations are the full ones: descriptions, costs and open squares reach the bot
    first = recordings[0].seen
    assert all(option.description for observation in first for option in observation.pending.options)
    assert any(option.HasField("cost") for observation in first for option in observation.pending.options)
    assert any(observation.mine_squares or observation.plot_squares for observation in first)


@pytest.mark.parametrize(
    ("names", "seed"),
    [(["neural", "greedy"], 21), (["greedy", "mcts:8"], 22), (["neural-mcts:12", "mcts:8"], 23)],
)
async def test_the_ladder_plays_the_games_a_server_plays(
    server_address: str, names: list[str], seed: int
) -> None:
    """The ladder's in-process seats (:func:`kutnahora.envs.ladder.seat_player`, which
    plays a decision with one option without asking) make the decisions the same bots make over gRPC."""
    _, recordings, served_scores = await served_game(server_address, names, seed)
    players = [seat_player(name, bot_seed(seed, seat)) for seat, name in enumerate(names)]
    state = new_game(GameOptions(players=len(names)), seed)
    asked = [0] * len(names)
    while state.pending is not None:
        seat, options = state.pending.seat, state.pending.options
        served_index = recordings[seat].chosen[asked[seat]]
        asked[seat] += 1
        option = options[0] if len(options) == 1 else players[seat](state, seat)
        assert options.index(option) == served_index, f"seat {seat} ({names[seat]}) chose otherwise"
        apply(state, option)
    assert [player.points for player in state.players] == served_scores


def test_an_opponent_named_greedy_is_the_served_greedy() -> None:
    """``make_opponent("greedy")`` is a :class:`BotOpponent` around the greedy bot, so what the tests
    above show holds for every environment that names it."""
    opponent: Any = make_opponent("greedy", seed=1)
    assert isinstance(opponent, BotOpponent)
    assert type(opponent.bot).__name__ == "GreedyBot"
