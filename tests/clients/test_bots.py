"""The reference bots and ``kutnahora-bot``: seeded randomness, greedy's strength, the command line."""

from __future__ import annotations

import time
from collections.abc import Awaitable

import pytest

from kutnahora.clients.bots import BOTS, GreedyBot, RandomBot, make_bot
from kutnahora.clients.bots.paced import PacedBot
from kutnahora.clients.sdk import Bot, Choice
from kutnahora.clients.tournament.results import GameRecord
from kutnahora.clients.tournament.runner import BotSpec, Runner, RunnerConfig
from kutnahora.clients.tournament.schedule import schedule
from kutnahora.v1 import game_pb2
from tests.clients.helpers import play_game, run_module


def _observation(options: int) -> game_pb2.Observation:
    observation = game_pb2.Observation(version=1)
    for index in range(options):
        observation.pending.options.add(index=index, text=f"option {index}")
    return observation


def test_the_random_bot_is_uniform_and_repeats_with_its_seed() -> None:
    observation = _observation(5)
    first = [RandomBot(7).choose(observation) for _ in range(3)]
    again = [RandomBot(7).choose(observation) for _ in range(3)]
    assert [o.index for o in first] == [o.index for o in again]
    bot = RandomBot(1)
    picks = [bot.choose(observation).index for _ in range(2000)]
    assert set(picks) == set(range(5))
    assert all(300 < picks.count(i) < 500 for i in range(5))


def test_make_bot_names_the_known_bots() -> None:
    assert set(BOTS) == {"random", "greedy", "mcts", "neural", "neural-mcts"}
    assert isinstance(make_bot("greedy", 1), GreedyBot)
    try:
        make_bot("nobody")
    except KeyError as error:
        assert "greedy, mcts, neural, neural-mcts, random" in str(error)
    else:
        raise AssertionError("an unknown bot was made")


async def test_greedy_plays_legal_games_at_every_player_count(server_address: str) -> None:
    for bots in (["greedy", "greedy"], ["greedy", "random", "greedy"]):
        outcomes = await play_game(server_address, bots, seed=len(bots))
        assert all(o.finished for o in outcomes)
        assert all(o.refused == 0 for o in outcomes)  # every answer was one of the listed options


async def test_two_greedy_bots_beat_two_random_bots(server_address: str) -> None:
    """A small version of the 200-game benchmark in docs/bots.md#tournaments: greedy must win clearly."""
    config = RunnerConfig(
        bots={"greedy": BotSpec("greedy"), "random": BotSpec("random")}, players=4, concurrency=6
    )
    records: list[GameRecord] = []
    await Runner(config, server_address).run(schedule(["greedy", "random"], 4, 12, seed=2024), records.append)
    assert [r.status for r in records] == ["finished"] * 12
    greedy_wins = sum(1 for r in records if any(r.bots[w] == "greedy" for w in r.winners))
    assert greedy_wins >= 9, f"greedy won only {greedy_wins} of 12 games"
    greedy_scores = [s for r in records for s, b in zip(r.scores or [], r.bots, strict=True) if b == "greedy"]
    random_scores = [s for r in records for s, b in zip(r.scores or [], r.bots, strict=True) if b == "random"]
    assert sum(greedy_scores) / len(greedy_scores) > sum(random_scores) / len(random_scores) + 10


def test_the_bot_command_plays_a_whole_game(server_address: str) -> None:
    done = run_module(
        "kutnahora.clients.bots.cli",
        "greedy",
        "--server",
        server_address,
        "--create",
        "--players",
        "3",
        "--fill",
    )
    assert done.returncode == 0, done.stderr
    assert "Created game" in done.stdout and "finished" in done.stdout and "winner" in done.stdout


def test_the_bot_command_joins_a_game_by_id(server_address: str) -> None:
    created = run_module(
        "kutnahora.clients.bots.cli",
        "random",
        "--server",
        server_address,
        "--create",
        "--players",
        "1",
        "--quiet",
    )
    assert created.returncode == 2 and "--players must be 2, 3 or 4" in created.stderr
    missing = run_module("kutnahora.clients.bots.cli", "random", "--server", server_address, "--game", "nope")
    assert missing.returncode == 1 and "there is no game" in missing.stderr.lower()


def test_the_bot_command_says_in_one_line_when_the_server_is_away() -> None:
    done = run_module("kutnahora.clients.bots.cli", "random", "--server", "127.0.0.1:1", "--create")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "cannot connect to the Kutná Hora server at 127.0.0.1:1" in done.stderr
    helped = run_module("kutnahora.clients.bots.cli", "--help")
    assert helped.returncode == 0 and "--create" in helped.stdout and "--fill" in helped.stdout


def test_greedy_prices_options_by_the_listed_cost() -> None:
    """The greedy bot keeps no copy of the pricing rules: a plot or a mine square it is offered is worth
    less the more the server says it costs, whatever the bot could work out itself."""
    import random

    from kutnahora import engine
    from kutnahora.clients.bots.greedy import (
        Position,
        Tables,
        Weights,
        _score_mine_square,
        _score_plot_square,
    )
    from kutnahora.engine.options import DecisionKind
    from kutnahora.wire import components_to_wire, seat_observation
    from kutnahora.wire.encoder import ObservationEncoder

    components = components_to_wire(engine.default_components())
    tables = Tables(components, 2)
    scorers = {DecisionKind.PLOT_SQUARE: _score_plot_square, DecisionKind.MINE_SQUARE: _score_mine_square}
    seen = set()
    state = engine.new_game(engine.GameOptions(players=2), 8)
    rng = random.Random(8)
    while state.pending is not None and len(seen) < 2:
        pending = state.pending
        if pending.kind in scorers:
            seat = pending.seat
            wire = game_pb2.Observation.FromString(
                seat_observation.encode_observation(state, seat, ObservationEncoder("g"))
            )
            position = Position(wire, tables, Weights(), seat)
            option = wire.pending.options[0]
            cheap, dear = game_pb2.LegalOption(), game_pb2.LegalOption()
            cheap.CopyFrom(option)
            dear.CopyFrom(option)
            cheap.cost.groschen, dear.cost.groschen = 1, 30
            assert scorers[pending.kind](position, cheap) > scorers[pending.kind](position, dear)
            seen.add(pending.kind)
        engine.apply(state, rng.choice(engine.legal(state)))
    assert seen == set(scorers)


class _Answering(Bot):
    """A bot whose answer is the version it saw, given at once or awaited."""

    name = "answering"

    def __init__(self, awaited: bool) -> None:
        self.awaited = awaited

    def choose(self, observation: game_pb2.Observation) -> Choice | Awaitable[Choice]:
        if not self.awaited:
            return observation.version

        async def later() -> Choice:
            return observation.version

        return later()


@pytest.mark.parametrize("awaited", [False, True])
async def test_a_paced_bot_waits_before_each_decision_then_answers_as_its_bot(awaited: bool) -> None:
    paced = PacedBot(_Answering(awaited), 0.05)
    assert paced.name == "answering"
    started = time.monotonic()
    assert await paced.choose(game_pb2.Observation(version=7)) == 7
    assert time.monotonic() - started >= 0.05
