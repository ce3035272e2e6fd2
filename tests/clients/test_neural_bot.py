"""The neural bot: reads its weights with NumPy alone, plays legal games at 2, 3 and 4 players with and
without its search, decides from its seat's observation alone, and beats greedy with the shipped network."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kutnahora.clients.bots import is_bot, make_bot
from kutnahora.clients.bots.mcts import tree_options
from kutnahora.clients.bots.neural import OTHERS, TOP, NeuralBot, guided_search, search, shipped_network
from kutnahora.clients.tournament.stats import wilson
from kutnahora.engine import GameOptions, GameState, apply, legal, new_game, observe
from kutnahora.envs.ladder import Clock, play, schedule
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.wire import observation_to_wire
from tests.clients.helpers import run_module
from tests.hidden_information import disguise

ROOT = Path(__file__).resolve().parents[2]


def small_net(path: Path, seed: int = 0) -> Path:
    """A random network of the right shape, small (for tests that do not need a trained one)."""
    layout = ObservationLayout()
    actions = ActionSpace(layout.components).size
    rng = np.random.default_rng(seed)

    def layer(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.standard_normal((a, b)).astype(np.float32) * 0.05, np.zeros(b, np.float32)

    net = network.PolicyValueNet([layer(layout.size, 16)], layer(16, actions), layer(16, 1), {})
    network.save(net, path)
    return path


def _position(players: int, seed: int, decisions: int) -> GameState:
    state = new_game(GameOptions(players=players), seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        apply(state, rng.choice(legal(state)))
    while len(legal(state)) < 2:
        apply(state, legal(state)[0])
    return state


def test_neural_names_and_budgets() -> None:
    assert is_bot("neural") and is_bot("neural:50") and is_bot("neural:120ms")
    assert not is_bot("neural:0") and not is_bot("neural:fast") and not is_bot("neurals")
    bot = make_bot("neural:7", 1)
    assert isinstance(bot, NeuralBot) and bot.simulations == 7 and bot.searches
    timed = make_bot("neural:40ms", 1)
    assert isinstance(timed, NeuralBot) and timed.budget_ms == 40
    assert not NeuralBot(1).searches
    with pytest.raises(KeyError, match="a neural budget"):
        make_bot("neural:-3")
    with pytest.raises(ValueError, match="at least 1"):
        NeuralBot(1, simulations=0)


def test_neural_mcts_names_and_budgets() -> None:
    assert is_bot("neural-mcts") and is_bot("neural-mcts:100") and is_bot("neural-mcts:80ms")
    assert not is_bot("neural-mcts:0") and not is_bot("neural-mcts:many")
    bot = make_bot("neural-mcts:100", 1)
    assert isinstance(bot, NeuralBot) and bot.name == "neural-mcts"
    assert bot.simulations == 100 and bot.candidates == TOP and bot.others == OTHERS and bot.searches
    plain = make_bot("neural-mcts", 1)
    assert isinstance(plain, NeuralBot) and plain.simulations == 400
    timed = make_bot("neural-mcts:80ms", 1)
    assert isinstance(timed, NeuralBot) and timed.budget_ms == 80 and timed.simulations is None
    with pytest.raises(ValueError, match="needs a budget"):
        NeuralBot(1, candidates=3)
    with pytest.raises(ValueError, match="at least one candidate"):
        NeuralBot(1, simulations=5, candidates=0)
    with pytest.raises(ValueError, match="at least one option of another seat"):
        NeuralBot(1, simulations=5, candidates=3, others=0)


def _wide_position() -> GameState:
    """A position whose decision has more options the search bot's tree considers than the guide keeps."""
    for seed in range(60):
        state = _position(2, seed, 25)
        while state.pending is not None and len(tree_options(state)) <= TOP:
            apply(state, legal(state)[0])
        if state.pending is not None:
            return state
    raise AssertionError("no wide position found")


def test_the_guided_search_searches_the_policys_favourite_options(tmp_path: Path) -> None:
    """Its scores are the deciding seat's policy logits, read from its view; the root is searched among
    the options the policy scores highest, read from the seat's observation."""
    bot = NeuralBot(1, simulations=40, weights=small_net(tmp_path / "net.npz", seed=4), candidates=2)
    state = _wide_position()
    seat = state.pending.seat if state.pending else 0
    view = observe(state, seat)
    options = tree_options(state)
    logits, _ = bot.net.forward(bot.layout.encode(view, normalized=True))
    expected = logits[0, bot.evaluator.space.ids(options)]
    assert np.allclose(bot.evaluator.scores(state, options), expected, atol=1e-6)
    favourites = {options[i] for i in np.argsort(-expected, kind="stable")[:2]}
    result = guided_search(view, bot.evaluator, random.Random(3), iterations=40, top=2)
    assert {o for o, n in result.visits.items() if n} == favourites
    assert result.option in favourites and result.iterations == 40
    again = guided_search(view, bot.evaluator, random.Random(3), iterations=40, top=2)
    assert (again.option, again.visits) == (result.option, result.visits)
    timed = guided_search(view, bot.evaluator, random.Random(3), budget_ms=40, top=2)
    assert timed.iterations >= 1 and timed.option in favourites
    with pytest.raises(ValueError, match="budget"):
        guided_search(view, bot.evaluator, random.Random(3))
    with pytest.raises(ValueError, match="owes no decision"):
        guided_search(observe(state, 1 - seat), bot.evaluator, random.Random(3), iterations=5)


def test_the_guided_bot_decides_from_the_observation_alone(tmp_path: Path) -> None:
    state = _position(2, 8, 30)
    seat = state.pending.seat if state.pending else 0
    other = disguise(state, random.Random(3), keep_drawn=True)
    assert observe(other, seat) == observe(state, seat)
    bot = NeuralBot(5, simulations=30, weights=small_net(tmp_path / "net.npz"), candidates=3)
    assert bot.decide(observe(state, seat)) == bot.decide(observe(other, seat))


def test_the_guided_bot_goes_on_from_its_last_search_within_its_turn(tmp_path: Path) -> None:
    """When its seat decides again right after its own decision, the bot searches on from the node
    below the option it played (the tree holds more visits than the new iterations); a decision of
    another seat, or a new game, starts afresh."""
    bot = NeuralBot(2, simulations=30, weights=small_net(tmp_path / "net.npz"), candidates=3)
    going_on = afresh = 0
    for seed in range(4):
        state = new_game(GameOptions(players=2), seed)
        previous: tuple[int, int] | None = None
        while state.pending is not None and state.version < 120:
            seat = state.pending.seat
            if len(legal(state)) == 1:
                apply(state, legal(state)[0])
                continue
            option = bot.decide(observe(state, seat))
            result = bot.last_guided
            assert result is not None and result.tree is not None
            visits = sum(child.visits for child in result.tree.children.values())
            if previous == (seat, state.version - 1):
                going_on += visits > result.iterations
            else:
                assert visits == result.iterations
                afresh += 1
            previous = (seat, state.version)
            apply(state, option)
    assert going_on > 0 and afresh > 0


@pytest.mark.parametrize("players", [2, 4])
def test_whole_games_with_the_guided_search(players: int, tmp_path: Path) -> None:
    path = small_net(tmp_path / "net.npz")
    bot = NeuralBot(1, simulations=4, weights=path, candidates=TOP)
    state = new_game(GameOptions(players=players), players + 10)
    while state.pending is not None:
        seat = state.pending.seat
        option = bot.decide(observe(state, seat))
        assert option in legal(state)
        apply(state, option)
    assert state.over


def test_a_weights_file_round_trips_and_bad_files_are_refused(tmp_path: Path) -> None:
    path = small_net(tmp_path / "net.npz")
    net = network.load(path)
    vector = np.random.default_rng(1).random(net.inputs, dtype=np.float32)
    logits, values = net.forward(vector)
    assert logits.shape == (1, net.actions) and values.shape == (1,) and -1 <= values[0] <= 1
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a weights file"):
        network.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "partial.npz", meta=np.array('{"format": 1}'))
    with pytest.raises(ValueError, match="not a usable weights file"):
        network.load(tmp_path / "partial.npz")
    with pytest.raises(ValueError, match="reads vectors of"):
        net.forward(np.zeros(5, np.float32))


def test_the_sparse_first_layer_equals_the_dense_product(tmp_path: Path) -> None:
    net = network.load(small_net(tmp_path / "net.npz", seed=3))
    rng = np.random.default_rng(2)
    batch = np.where(rng.random((3, net.inputs)) < 0.05, rng.random((3, net.inputs)), 0).astype(np.float32)
    logits, values = net.forward(batch)
    (w0, b0), (wp, bp), (wv, bv) = net.trunk[0], net.policy, net.value
    hidden = np.maximum(batch @ w0 + b0, 0)
    assert np.allclose(logits, hidden @ wp + bp, atol=1e-4)
    assert np.allclose(values, np.tanh(hidden @ wv + bv)[:, 0], atol=1e-5)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_whole_games_with_and_without_search(players: int, tmp_path: Path) -> None:
    path = small_net(tmp_path / "net.npz")
    bots = [NeuralBot(1, weights=path), NeuralBot(2, simulations=6, weights=path)]
    state = new_game(GameOptions(players=players), players)
    while state.pending is not None:
        seat = state.pending.seat
        option = bots[seat % 2].decide(observe(state, seat))
        assert option in legal(state)
        apply(state, option)
    assert state.over


def test_the_search_is_deterministic_for_a_seed_and_counts_its_simulations(tmp_path: Path) -> None:
    bot = NeuralBot(3, simulations=25, weights=small_net(tmp_path / "net.npz"))
    state = _position(3, 5, 40)
    observation = observe(state, state.pending.seat if state.pending else 0)
    first = search(observation, bot.evaluator, random.Random(4), simulations=25)
    again = search(observation, bot.evaluator, random.Random(4), simulations=25)
    assert first.option == again.option and first.visits == again.visits
    assert first.simulations == 25 and sum(first.visits.values()) == 25
    assert first.option in legal(state)
    timed = search(observation, bot.evaluator, random.Random(4), budget_ms=30)
    assert timed.simulations >= 1 and timed.option in legal(state)
    with pytest.raises(ValueError, match="budget"):
        search(observation, bot.evaluator, random.Random(4))


def test_the_bot_decides_from_the_observation_alone(tmp_path: Path) -> None:
    """Two games that differ only in what the seat cannot see get the same decision, search included."""
    state = _position(2, 8, 30)
    seat = state.pending.seat if state.pending else 0
    other = disguise(state, random.Random(3), keep_drawn=True)
    assert observe(other, seat) == observe(state, seat)
    bot = NeuralBot(5, simulations=30, weights=small_net(tmp_path / "net.npz"))
    assert bot.decide(observe(state, seat)) == bot.decide(observe(other, seat))


async def test_the_bot_answers_a_wire_observation_with_a_listed_option(tmp_path: Path) -> None:
    state = _position(2, 3, 20)
    seat = state.pending.seat if state.pending else 0
    wire = observation_to_wire(observe(state, seat), "local")
    path = small_net(tmp_path / "n.npz")
    for bot in (NeuralBot(1, weights=path), NeuralBot(1, simulations=5, weights=path)):
        answer = await bot.choose(wire)
        assert answer in [o.text for o in wire.pending.options]


def test_playing_never_imports_torch() -> None:
    """The shipped networks play with NumPy alone: whole games, with and without search (the guided one
    included), in a fresh interpreter, and no deep-learning module is loaded."""
    code = textwrap.dedent(
        """
        import sys
        from kutnahora.clients.bots import make_bot
        from kutnahora.envs.ladder import Clock, play
        record = play(["neural", "neural:4"], 7, 0, Clock())
        assert record.decisions > 20
        record = play(["neural-mcts:3", "neural"], 8, 1, Clock())
        assert record.decisions > 20
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "tensorflow", "jax"))
        print("LOADED", loaded)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout


@pytest.mark.parametrize(("weights", "method"), [(network.WEIGHTS, "run"), (network.GUIDE, "distill")])
def test_the_shipped_weights_files_are_small_and_recorded(weights: Path, method: str) -> None:
    import json

    assert weights.exists() and weights.stat().st_size < 5_000_000
    record = json.loads(weights.with_suffix(".json").read_text())
    assert record["exported_by"].startswith("kutnahora-train export")
    assert record["trained_by"] and all(
        c.startswith(f"kutnahora-train {method} ") for c in record["trained_by"]
    )
    net = shipped_network(weights)
    assert net.inputs == ObservationLayout().size
    assert net.actions == ActionSpace(ObservationLayout().components).size


def test_the_shipped_policy_beats_greedy_at_two_players() -> None:
    """The CI tournament: the shipped network's policy alone (no search) against greedy, 40 two-player
    games, 20 from each seat, fixed seeds. It must win a clear majority: the Wilson 95 % interval of its
    win rate lies above one half."""
    clock = Clock()
    wins = 0
    lineups = schedule(["neural", "greedy"], 2, 40, 1)
    for index, lineup in enumerate(lineups):
        record = play(lineup, 50_000 + index, index, clock)
        wins += record.winners == [record.bots.index("neural")]
    low, _ = wilson(wins, len(lineups))
    assert low > 0.5, f"neural won {wins} of {len(lineups)} against greedy"


def test_neural_is_an_arena_house_bot_kind_with_a_search_budget() -> None:
    from kutnahora.arena.house import parse_house_bots

    house = parse_house_bots("neural:50,neural,neural-mcts:100", 2)
    assert [(b.kind, b.iterations) for b in house] == [
        ("neural", 50),
        ("neural", None),
        ("neural-mcts", 100),
    ]
    with pytest.raises(ValueError, match="only mcts, neural and neural-mcts take a budget"):
        parse_house_bots("greedy:5", 2)


@pytest.mark.parametrize(("kind", "budget"), [("neural", "--search"), ("neural-mcts", "--iterations")])
def test_the_bot_command_plays_a_whole_game_with_a_search(
    server_address: str, kind: str, budget: str
) -> None:
    done = run_module(
        "kutnahora.clients.bots.cli",
        kind,
        budget,
        "3",
        "--bot-seed",
        "2",
        "--server",
        server_address,
        "--create",
        "--players",
        "2",
        "--fill",
    )
    assert done.returncode == 0, done.stderr
    assert f"as {kind}" in done.stdout and "finished" in done.stdout


def test_the_bot_command_checks_the_search_options() -> None:
    done = run_module("kutnahora.clients.bots.cli", "greedy", "--search", "10", "--create")
    assert done.returncode == 2 and "--search sets the neural bot's" in done.stderr
    done = run_module("kutnahora.clients.bots.cli", "neural", "--search", "0", "--create")
    assert done.returncode == 2 and "at least 1" in done.stderr
    done = run_module("kutnahora.clients.bots.cli", "neural", "--iterations", "10", "--create")
    assert done.returncode == 2 and "--search" in done.stderr
    done = run_module("kutnahora.clients.bots.cli", "neural-mcts", "--search", "10", "--create")
    assert done.returncode == 2 and "--search sets the neural bot's" in done.stderr
