"""The search bot: deterministic for a seed and an iteration budget, legal, honest, and playable over gRPC.

Its strength is measured by ``kutnahora-tournament``
(docs/bots.md#the-search-bot-a-yardstick-that-simulates), not here: CI plays one short game with a tiny
budget.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from kutnahora.clients.bots import is_bot, make_bot, mcts_budget
from kutnahora.clients.bots import mcts as mcts_module
from kutnahora.clients.bots.mcts import (
    Guide,
    MctsBot,
    SearchResult,
    heuristic_rollout,
    random_rollout,
    rewards,
    search,
    subtree,
    tree_options,
)
from kutnahora.clients.tournament.schedule import lineups
from kutnahora.engine import GameOptions, GameState, Observation, Option, apply, legal, new_game, observe
from kutnahora.engine.options import PlayCard
from tests.clients.helpers import play_game, run_module
from tests.hidden_information import disguise


def _position(players: int, seed: int, decisions: int) -> GameState:
    state = new_game(GameOptions(players=players), seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        apply(state, rng.choice(legal(state)))
    while len(legal(state)) < 2:
        apply(state, legal(state)[0])
    return state


def test_the_same_seed_and_iterations_give_the_same_search() -> None:
    state = _position(3, 4, 40)
    observation = observe(state, state.pending.seat if state.pending else 0)
    first = search(observation, random.Random(9), iterations=40)
    again = search(observation, random.Random(9), iterations=40)
    assert first.option == again.option and first.visits == again.visits
    assert first.iterations == 40 and sum(first.visits.values()) == 40
    assert first.option in legal(state)


def test_the_bot_decides_from_the_observation_alone() -> None:
    """Two games that differ only in what the seat cannot see get the same decision from the same seed."""
    state = _position(2, 8, 30)
    seat = state.pending.seat if state.pending else 0
    other = disguise(state, random.Random(3), keep_drawn=True)
    assert observe(other, seat) == observe(state, seat)
    bot = MctsBot(5, iterations=30)
    assert bot.decide(observe(state, seat)) == bot.decide(observe(other, seat))


def test_a_time_budget_stops_the_search() -> None:
    state = _position(4, 2, 20)
    result = search(
        observe(state, state.pending.seat if state.pending else 0), random.Random(1), budget_ms=50
    )
    assert result.iterations >= 1 and result.option in legal(state)


def test_a_search_needs_a_budget_and_a_decision_of_its_own() -> None:
    state = _position(2, 1, 10)
    seat = state.pending.seat if state.pending else 0
    with pytest.raises(ValueError, match="budget"):
        search(observe(state, seat), random.Random(1))
    with pytest.raises(ValueError, match="owes no decision"):
        search(observe(state, 1 - seat), random.Random(1), iterations=5)


@pytest.mark.parametrize("policy", [heuristic_rollout, random_rollout])
def test_rollout_policies_choose_legal_options_and_rewards_favour_the_winner(policy: object) -> None:
    state = new_game(GameOptions(players=3), 2)
    rng = random.Random(2)
    while not state.over:
        option = policy(state, rng)  # type: ignore[operator]
        assert option in legal(state)
        apply(state, option)
    reward = rewards(state)
    best = max(range(3), key=lambda s: (state.players[s].points, state.players[s].groschen))
    assert reward[best] == max(reward) and all(0.0 <= r <= 1.0 for r in reward)


def test_the_tree_leaves_out_cards_for_no_effect_only_while_a_half_has_one() -> None:
    state = new_game(GameOptions(players=2), 6)
    rng = random.Random(6)
    seen = 0
    while not state.over:
        considered = tree_options(state)
        assert set(considered) <= set(legal(state)) and considered
        if state.pending is not None and state.pending.kind == "play_card":
            useful = [o for o in legal(state) if isinstance(o, PlayCard) and o.action is not None]
            assert list(considered) == (useful or list(legal(state)))
            seen += 1
        else:
            assert considered == legal(state)
        apply(state, rng.choice(legal(state)))
    assert seen > 20


def test_mcts_budgets_in_bot_names() -> None:
    assert mcts_budget("200") == (200, None) and mcts_budget("500ms") == (None, 500.0)
    assert is_bot("mcts") and is_bot("mcts:200") and is_bot("mcts:20ms")
    assert not is_bot("mcts:0") and not is_bot("mcts:fast") and not is_bot("greedy:3")
    bot = make_bot("mcts:25", 1)
    assert isinstance(bot, MctsBot) and bot.iterations == 25 and bot.budget_ms is None
    with pytest.raises(KeyError, match="iterations"):
        make_bot("mcts:-3")
    assert lineups(["mcts:25", "greedy*3"], 4) == [("mcts:25", "greedy", "greedy", "greedy")]
    with pytest.raises(ValueError, match="add up"):
        lineups(["mcts", "greedy*2"], 4)


async def test_a_short_game_against_greedy_over_grpc(server_address: str) -> None:
    """The CI smoke game: the bot plays a whole two-player game through the SDK with a tiny budget."""
    outcomes = await play_game(server_address, ["mcts:3", "greedy"], seed=3)
    assert all(o.finished for o in outcomes)
    assert outcomes[0].refused == 0 and outcomes[0].decisions > 20


def test_the_bot_command_plays_a_whole_game_with_a_search_budget(server_address: str) -> None:
    done = run_module(
        "kutnahora.clients.bots.cli",
        "mcts",
        "--iterations",
        "2",
        "--bot-seed",
        "4",
        "--server",
        server_address,
        "--create",
        "--players",
        "2",
        "--fill",
    )
    assert done.returncode == 0, done.stderr
    assert "Playing game" in done.stdout and "as mcts" in done.stdout and "finished" in done.stdout


def test_the_bot_command_checks_its_budget() -> None:
    done = run_module("kutnahora.clients.bots.cli", "mcts", "--iterations", "0", "--create")
    assert done.returncode == 2 and "--iterations must be at least 1" in done.stderr
    done = run_module("kutnahora.clients.bots.cli", "greedy", "--budget-ms", "100", "--create")
    assert done.returncode == 2 and "mcts" in done.stderr


def _wide_position() -> GameState:
    """A position whose decision has at least four options the tree considers."""
    for seed in range(40):
        state = _position(2, seed, 25)
        while state.pending is not None and len(tree_options(state)) < 4:
            apply(state, legal(state)[0])
        if state.pending is not None:
            return state
    raise AssertionError("no wide position found")


def test_a_guide_narrows_every_decision_of_the_tree_to_its_top_options() -> None:
    """The root is searched among the guide's top options only, and the guide is asked, and obeyed, at
    the other seat's decisions too."""
    state = _wide_position()
    seat = state.pending.seat if state.pending else 0
    asked: list[int] = []

    def last_first(drawn: GameState, options: tuple[Option, ...]) -> list[float]:
        assert drawn.pending is not None
        asked.append(drawn.pending.seat)
        return [float(i) for i in range(len(options))]  # the later an option, the better

    options = tree_options(state)
    result = search(observe(state, seat), random.Random(2), iterations=80, guide=last_first, top=2)
    assert set(o for o, n in result.visits.items() if n) == set(options[-2:])
    assert result.option in options[-2:] and sum(result.visits.values()) == 80
    assert 1 - seat in asked  # the other seat's decisions were narrowed as well
    again = search(observe(state, seat), random.Random(2), iterations=80, guide=last_first, top=2)
    assert (again.option, again.visits) == (result.option, result.visits)
    wide = search(observe(state, seat), random.Random(2), iterations=80)
    assert len([n for n in wide.visits.values() if n]) > 2
    with pytest.raises(ValueError, match="at least one option"):
        search(observe(state, seat), random.Random(2), iterations=8, guide=last_first, top=0)


def _two_in_a_row() -> tuple[GameState, Observation, SearchResult, GameState]:
    """A position, its seat's view, a search of it, and the game after the option it chose, where the
    same seat decides again right away (its turn goes on)."""
    for seed in range(80):
        state = _position(2, seed, 20)
        seat = state.pending.seat if state.pending else 0
        searched = observe(state, seat)
        result = search(searched, random.Random(4), iterations=60)
        after = state.clone()
        apply(after, result.option)
        if after.pending is not None and after.pending.seat == seat and len(legal(after)) > 1:
            return state, searched, result, after
    raise AssertionError("no position with two decisions in a row found")


def test_a_search_goes_on_from_the_node_below_the_option_played() -> None:
    """The same seat's next decision, right after this one, searches on from the node below the option
    played: its visits count with the new iterations. Any other observation starts afresh."""
    _, searched, first, after = _two_in_a_row()
    seat = searched.viewer
    assert seat is not None
    node = subtree(first, searched, observe(after, seat))
    assert first.tree is not None and node is first.tree.children[first.option]
    inherited = sum(child.visits for child in node.children.values())
    assert inherited > 0
    going_on = search(observe(after, seat), random.Random(5), iterations=30, tree=node)
    assert going_on.iterations == 30 and going_on.tree is node
    assert sum(going_on.visits.values()) == inherited + 30
    assert going_on.option in legal(after)
    # Another seat's view, the same view again, or a later one: nothing to go on from.
    assert subtree(first, searched, observe(after, 1 - seat)) is None
    assert subtree(first, searched, searched) is None
    later = after.clone()
    apply(later, going_on.option)
    if later.pending is not None:
        assert subtree(first, searched, observe(later, later.pending.seat)) is None


def test_a_settled_search_stops_early_with_the_same_choice() -> None:
    """Stopping once the most visited option can no longer be overtaken changes no choice: the
    iterations done are the first ones of the full search, and fewer of them on a lopsided decision."""
    saved = 0
    for seed in range(6):
        state = _position(2, seed, 15 + 7 * seed)
        seat = state.pending.seat if state.pending else 0
        view = observe(state, seat)
        full = search(view, random.Random(seed), iterations=120)
        settled = search(view, random.Random(seed), iterations=120, settle=True)
        assert settled.option == full.option
        assert settled.iterations <= full.iterations == 120
        assert all(settled.visits[o] <= full.visits[o] for o in full.visits)
        saved += full.iterations - settled.iterations
    assert saved > 0


def test_the_other_seats_decisions_can_be_narrowed_further(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``others_top``, the other seats' decisions in the tree are searched among that many of the
    guide's favourites (one: the guide's prediction of what they play), the viewer's among ``top``."""
    state = _wide_position()
    seat = state.pending.seat if state.pending else 0
    kept: list[tuple[int, int]] = []
    narrow = mcts_module._narrow

    def recording(
        node: mcts_module.Node,
        drawn: GameState | Callable[[], GameState],
        options: tuple[Option, ...],
        guide: Guide,
        top: int,
    ) -> tuple[Option, ...]:
        chosen = narrow(node, drawn, options, guide, top)
        position = drawn() if callable(drawn) else drawn  # the native core's game gives a copy on demand
        assert position.pending is not None
        kept.append((position.pending.seat, len(chosen)))
        return chosen

    monkeypatch.setattr(mcts_module, "_narrow", recording)

    def last_first(drawn: GameState, options: tuple[Option, ...]) -> list[float]:
        return [float(i) for i in range(len(options))]

    result = search(
        observe(state, seat), random.Random(2), iterations=60, guide=last_first, top=3, others_top=1
    )
    assert {n for s, n in kept if s != seat} == {1}
    assert {n for s, n in kept if s == seat} == {3}
    assert set(o for o, n in result.visits.items() if n) == set(tree_options(state)[-3:])
    with pytest.raises(ValueError, match="at least one option"):
        search(observe(state, seat), random.Random(2), iterations=8, guide=last_first, others_top=0)


def test_settling_counts_only_the_options_of_the_decision_searched() -> None:
    """A tree gone on from may hold nodes of options another draw's decision had (a tile drawn there,
    not here): however visited, they do not settle the search."""
    state = _wide_position()
    seat = state.pending.seat if state.pending else 0
    view = observe(state, seat)
    stranger = next(o for other in range(20) for o in legal(_position(2, other, 60)) if o not in legal(state))
    tree = mcts_module.Node()
    tree.children[stranger] = foreign = mcts_module.Node()
    foreign.visits, foreign.total = 1_000, 500.0
    result = search(view, random.Random(1), iterations=40, tree=tree, settle=True)
    assert result.iterations > 0 and sum(result.visits.values()) == result.iterations
    assert result.option in legal(state)
