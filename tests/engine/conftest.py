"""Prepared positions for the rule-by-rule engine tests, and the two engines every test runs against.

**Both engines.** Every test here runs twice (the ``engine`` fixture, used by all): with the pure engine,
and, when the native core is built, with the core behind the same API. For the native run the fixture
replaces the engine's public functions a test module and the helpers below call, ``new_game``, ``apply``,
``replay`` and ``result``, by ones that run the core (:mod:`kutnahora.native`): a state is loaded into
the core as it stands (prepared fields and the pending decision included), the decision is resolved there
(refused, unchanged, as the engine refuses), and the core's state is written back into the very same
:class:`~kutnahora.engine.state.GameState` object, in place, so that a test's references to a seat's board
or the city stay valid; ``legal``, ``observe``, ``state_hash`` and the rest then read what the core did.
A test that calls none of those functions exercises pure-Python internals only (the component file, the
observer's caches, the text forms, ...): its native run is skipped, naming the reason
(:data:`PYTHON_ONLY`).

A test starts a game with :func:`started` (the guild draft answered with the first legal option), plays
canonical option texts with :func:`play`, and prepares a position by setting fields of the state directly
with the small helpers below. After preparing, :func:`repose` poses the pending PLAY_CARD decision again,
so that its options are worked out from the prepared position exactly as the engine would.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import fields, is_dataclass
from types import ModuleType
from typing import Any

import pytest

from kutnahora.engine import (
    GameOptions,
    apply,
    default_components,
    legal,
    new_game,
    option_text,
    parse_option,
)
from kutnahora.engine.components import ComponentSet, Deck, Guild, Square
from kutnahora.engine.events import Event
from kutnahora.engine.flow import play_card_options, run
from kutnahora.engine.game import GameResult
from kutnahora.engine.options import DecisionKind, Option, PendingDecision
from kutnahora.engine.state import CityTile, GameState, MinePlacement, Phase
from kutnahora.native import native_available

TEXT_FORMS = "the text forms of options and costs are the engine's Python, which the core does not make"
PYTHON_ONLY: dict[str, str] = {
    "test_component_cache.py": "the component cache is the engine's Python, which the core does not use",
    "test_components.py": "the component file's parser and checks are the engine's Python (the core is "
    "given the loaded values)",
    "test_posing.py": "it calls the engine's option posing directly, an internal",
    "test_cli_and_text.py::test_sim_refuses_a_broken_component_file": "kutnahora-sim refuses the file before "
    "any game is played, on either engine",
    "test_cli_and_text.py::test_sim_refuses_zero_games": "kutnahora-sim refuses its arguments before any "
    "game is played, on either engine",
    "test_cli_and_text.py::test_parse_option_refuses_nonsense": TEXT_FORMS,
    "test_cli_and_text.py::test_option_texts": TEXT_FORMS,
    "test_costs.py::test_describe_cost_words": TEXT_FORMS,
}
"""Test modules (or ``module::test``) that call only pure-Python internals: their native run is skipped,
for this reason."""

IN_A_CHILD = {"test_cli_and_text.py::test_sim_shows_its_progress_on_a_terminal"}
"""Tests that play in a child process (which ``KUTNAHORA_ENGINE`` sends to the core), not counted here."""

ENGINE_FUNCTIONS = ("new_game", "apply", "replay", "result")
"""The engine's public functions the native run replaces, wherever a test module or this one names them."""


def _sync(old: Any, new: Any) -> None:
    """Make the dataclass ``old`` equal to ``new`` in place: lists, dicts, boards and the generator kept as
    objects, so that references a test holds into the state stay valid."""
    for f in fields(old):
        before, after = getattr(old, f.name), getattr(new, f.name)
        if isinstance(before, list) and isinstance(after, list):
            _sync_list(before, after)
        elif isinstance(before, dict) and isinstance(after, dict):
            before.clear()
            before.update(after)
        elif isinstance(before, random.Random) and isinstance(after, random.Random):
            before.setstate(after.getstate())
        elif _mutable(before) and type(before) is type(after):
            _sync(before, after)
        else:
            setattr(old, f.name, after)


def _mutable(value: object) -> bool:
    return is_dataclass(value) and not isinstance(value, type) and not value.__dataclass_params__.frozen  # type: ignore[attr-defined]


def _sync_list(old: list[Any], new: list[Any]) -> None:
    if len(old) == len(new) and all(
        (isinstance(a, list) and isinstance(b, list)) or (_mutable(a) and type(a) is type(b))
        for a, b in zip(old, new, strict=True)
    ):
        for a, b in zip(old, new, strict=True):
            if isinstance(a, list):
                _sync_list(a, b)
            else:
                _sync(a, b)
    else:
        old[:] = new


class Core:
    """The engine's public functions, run by the native core; counts the calls it made."""

    def __init__(self) -> None:
        from kutnahora.native.game import NativeGame

        self.game = NativeGame
        self.calls = 0

    def new_game(self, options: GameOptions, seed: int, components: ComponentSet | None = None) -> GameState:
        self.calls += 1
        return self.game.new(options, seed, components).to_state()

    def apply(self, state: GameState, option: Option, seat: int | None = None) -> list[Event]:
        self.calls += 1
        game = self.game.from_state(state)
        events = game.apply(option, seat)  # refused, changing nothing, as the engine refuses
        _sync(state, game.to_state())
        state.mine_costs_cache = None
        return events

    def replay(
        self,
        options: GameOptions,
        seed: int,
        decisions: Iterable[Option],
        components: ComponentSet | None = None,
    ) -> GameState:
        self.calls += 1
        game = self.game.new(options, seed, components)
        for option in decisions:
            game.apply(option)
        return game.to_state()

    def result(self, state: GameState) -> GameResult | None:
        self.calls += 1
        return self.game.from_state(state).result()


@pytest.fixture(autouse=True, params=["python", "native"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The engine the test runs against: the pure engine, then the native core behind the same API (and
    ``KUTNAHORA_ENGINE`` set to each, for the commands that read it, such as ``kutnahora-sim``)."""
    monkeypatch.setenv("KUTNAHORA_ENGINE", request.param)
    if request.param == "python":
        yield "python"
        return
    if not native_available():
        pytest.skip("the native core is not built (pip install ./native/core)")
    module = request.module
    file = module.__name__.rsplit(".", 1)[-1] + ".py"
    reason = PYTHON_ONLY.get(file) or PYTHON_ONLY.get(f"{file}::{request.node.originalname}")
    if reason is not None:
        pytest.skip(f"pure-Python internals only: {reason}")
    core = Core()
    here = _this_module()
    for target in (module, here):
        for name in ENGINE_FUNCTIONS:
            if name in vars(target):
                monkeypatch.setattr(target, name, getattr(core, name))
    made = core.game.new

    def counted(*args: Any, **kwargs: Any) -> Any:  # games the core deals for commands, as kutnahora-sim
        core.calls += 1
        return made(*args, **kwargs)

    monkeypatch.setattr(core.game, "new", counted)
    yield "native"
    assert core.calls or f"{file}::{request.node.originalname}" in IN_A_CHILD, (
        "this test called none of new_game, apply, replay and result, so its native run checked nothing: "
        "list it in PYTHON_ONLY with the reason"
    )


def _this_module() -> ModuleType:
    import sys

    return sys.modules[__name__]


def named(name: str) -> int:
    """The id of the building of this name in the default component set."""
    return next(b.id for b in default_components().buildings if b.name == name)


def started(players: int = 4, seed: int = 1, **options: Any) -> GameState:
    """A new game whose guild draft is answered with the first legal option: round 1, seat 0 to play."""
    state = new_game(GameOptions(players=players, **options), seed)
    while state.phase is not Phase.TURNS:
        apply(state, legal(state)[0])
    return state


def play(state: GameState, *texts: str) -> list[Event]:
    """Apply options given in their canonical text form, in order; returns every event."""
    events: list[Event] = []
    for text in texts:
        events.extend(apply(state, parse_option(text)))
    return events


def texts(state: GameState) -> list[str]:
    """The pending decision's legal options as canonical texts."""
    return [option_text(o) for o in legal(state)]


def kind(state: GameState) -> DecisionKind:
    """What the pending decision asks for."""
    assert state.pending is not None
    return state.pending.kind


def repose(state: GameState, seat: int | None = None) -> None:
    """Pose PLAY_CARD again for ``seat`` (default: the seat already owing it) after preparing the state."""
    state.mine_costs_cache = None
    if seat is None:
        assert state.pending is not None and state.pending.kind is DecisionKind.PLAY_CARD
        seat = state.pending.seat
    state.pending = PendingDecision(seat, DecisionKind.PLAY_CARD, play_card_options(state, seat))


def run_on(state: GameState) -> list[Event]:
    """Drop the pending decision and let the engine pose the next one (valid between cards and turns)."""
    events: list[Event] = []
    state.pending = None
    state.mine_costs_cache = None
    run(state, events)
    return events


def finish_turns(state: GameState) -> list[Event]:
    """Play every remaining card of the round for no effect, up to the round end (its first decision,
    or the next round when the round end needs none)."""
    events: list[Event] = []
    round_number = state.round
    while state.phase is Phase.TURNS and state.round == round_number:
        assert state.pending is not None and state.pending.kind is DecisionKind.PLAY_CARD
        card = min(state.players[state.pending.seat].hand)
        events.extend(play(state, f"play {card} none"))
    return events


def set_guilds(state: GameState, seat: int, *guilds: Guild) -> None:
    """Give a seat these three guilds, on its board's rows top to bottom."""
    a, b, c = guilds
    state.players[seat].guild_set = (a, b, c)
    state.players[seat].guilds = (a, b, c)


def pull_tile(state: GameState, tile: int) -> None:
    """Remove a building tile from wherever it waits (a town-hall stack or the red stack)."""
    if tile in state.red_stack:
        state.red_stack.remove(tile)
        return
    for row in state.town_hall:
        for stack in row:
            if tile in stack.tiles:
                stack.tiles.remove(tile)
                if not stack.tiles:
                    row.remove(stack)
                return


def give_rights(state: GameState, seat: int, *tiles: int) -> None:
    """Put building tiles in a seat's slots, taken out of the town hall."""
    for tile in tiles:
        pull_tile(state, tile)
        state.players[seat].slots.append(tile)


def claim(state: GameState, seat: int, *squares: Square) -> None:
    """Put a seat's plot markers on city squares."""
    for square in squares:
        state.players[seat].plots.append(square)
        state.plots[square] = seat


def build(state: GameState, square: Square, tile: int, owner: int | None) -> None:
    """Stand a building in the city (owner None for a public building)."""
    pull_tile(state, tile)
    state.city[square] = CityTile(tile, owner)
    if owner is not None:
        state.players[owner].buildings.append(tile)


def dig(state: GameState, seat: int, square: Square, tile: int) -> None:
    """Stand a mine tile in the mines, marked with one of the seat's miners from the reserve."""
    if tile in state.mine_stack:
        state.mine_stack.remove(tile)
    state.mines[square] = MinePlacement(tile, seat)
    state.players[seat].mines.append(square)
    state.players[seat].miners_reserve -= 1
    state.mine_costs_cache = None


def stack_top(state: GameState, *tiles: int) -> None:
    """Put these mine tiles on top of the mine stack, the first one on the very top."""
    for tile in tiles:
        if tile in state.mine_stack:
            state.mine_stack.remove(tile)
    state.mine_stack.extend(reversed(tiles))


def set_deck(state: GameState, deck: Deck, position: int) -> None:
    """Put a price deck at a card position."""
    state.deck_position[deck] = position
