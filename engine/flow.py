"""The game's flow: whose decision comes next, playing cards, the Joker, and applying a decision.

A game is a stack of small decisions. Rule modules pose decisions and push
:class:`~kutnahora.engine.state.Step` work; this module runs that work until the next decision is posed, and
outside any action moves the game along: the guild draft, the 2-2-1 turns of a round (002 · A round), the
round end. It is the only place that dispatches on step and decision kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise, permutations

from kutnahora.engine import barbara, income, mine, rounds, town
from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.components import Action, ComponentSet
from kutnahora.engine.economy import change_reputation
from kutnahora.engine.events import Event, action_words
from kutnahora.engine.options import (
    ArrangeGuilds,
    ChooseAction,
    ChooseGuildSet,
    DecisionKind,
    Option,
    PendingDecision,
    PlayCard,
)
from kutnahora.engine.setup import guild_sets
from kutnahora.engine.state import GameState, Phase, Step, StepKind

StepHandler = Callable[[GameState, Step, list[Event]], None]
Resolver = Callable[[GameState, int, Option, list[Event]], None]

CARDS_PER_TURN = (2, 2, 1)
JOKER_FREE_REPUTATION = 6
PLOT_DISCOUNT_REPUTATION = 3


def _paid_step(kind: StepKind) -> Callable[[int], Step]:
    """The step of an action played from a card: ``args[0]`` = 0, not St. Barbara's free version."""
    return lambda seat: Step(kind, seat, (0,))


ACTION_STEPS: dict[Action, Callable[[int], Step]] = {
    Action.MINE: _paid_step(StepKind.MINE),
    Action.RIGHTS: _paid_step(StepKind.RIGHTS),
    Action.PLOT: _paid_step(StepKind.PLOT),
    Action.BUILDING: _paid_step(StepKind.BUILDING),
    Action.INCOME: lambda seat: Step(StepKind.INCOME, seat),
    Action.ST_BARBARA: lambda seat: Step(StepKind.ST_BARBARA, seat),
}


_FEASIBLE: dict[Action, Callable[[GameState, int], bool]] = {
    Action.MINE: lambda state, seat: mine.mine_feasible(state, seat, free=False),
    Action.RIGHTS: town.rights_feasible,
    Action.PLOT: town.plot_feasible,
    Action.BUILDING: town.building_feasible,
    Action.INCOME: lambda state, seat: True,
    Action.ST_BARBARA: barbara.st_barbara_feasible,
    Action.JOKER: lambda state, seat: bool(joker_actions(state, seat)),
}


def action_feasible(state: GameState, seat: int, action: Action) -> bool:
    """Whether playing ``action`` (not free) can have an effect now (docs/rules.md#r4)."""
    return _FEASIBLE[action](state, seat)


def joker_cost(state: GameState, seat: int) -> int:
    """The reputation the Joker costs: 1, or nothing at reputation 6 or more."""
    return 0 if state.players[seat].reputation >= JOKER_FREE_REPUTATION else 1


def joker_actions(state: GameState, seat: int, known: dict[Action, bool] | None = None) -> list[Action]:
    """The actions the Joker can take with effect, judged after its reputation cost.

    Only the plot cost depends on reputation (3 or more: 1 groschen), so feasibility already worked out
    in ``known`` is reused unless the Joker's cost takes the seat from 3 to 2.
    """
    known = {} if known is None else known
    player = state.players[seat]
    saved = player.reputation
    after = max(-5, saved - joker_cost(state, seat))
    crosses = saved >= PLOT_DISCOUNT_REPUTATION > after
    if crosses:
        player.reputation = after
    try:
        found: list[Action] = []
        for action in ACTION_STEPS:
            if crosses or action not in known:
                feasible = action_feasible(state, seat, action)
                if not crosses:
                    known[action] = feasible
            else:
                feasible = known[action]
            if feasible:
                found.append(action)
        return found
    finally:
        player.reputation = saved


CardHalves = tuple[tuple[int, tuple[tuple[Action, PlayCard], ...], PlayCard], ...]


def _build_card_table(components: ComponentSet) -> tuple[CardHalves, bool]:
    """Each action card in order: its number, its distinct halves with their options, and its option for
    no effect; and whether the cards are listed by number. Option values are immutable, so each is built
    once per component set and shared."""
    cards = components.action_cards
    table = tuple(
        (
            card.number,
            tuple(
                (action, PlayCard(card.number, action))
                for action in ((card.top,) if card.top is card.bottom else (card.top, card.bottom))
            ),
            PlayCard(card.number, None),
        )
        for card in cards
    )
    return table, all(a.number < b.number for a, b in pairwise(cards))


_card_tables: ComponentCache[tuple[CardHalves, bool]] = ComponentCache(_build_card_table)


def play_card_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """Every card half that can have effect, then every card for no effect (docs/rules.md#r3)."""
    hand = state.players[seat].hand
    feasible: dict[Action, bool] = {}
    options: list[Option] = []
    no_effect: list[PlayCard] = []
    table, by_number = _card_tables.get(state.components)
    for number, halves, idle in table:
        if number not in hand:
            continue
        no_effect.append(idle)
        for action, option in halves:
            ok = feasible.get(action)
            if ok is None:
                if action is Action.JOKER:
                    ok = feasible[action] = bool(joker_actions(state, seat, feasible))
                else:
                    ok = feasible[action] = _FEASIBLE[action](state, seat)
            if ok:
                options.append(option)
    if not by_number:
        no_effect.sort(key=lambda option: option.card)
    options.extend(no_effect)  # the cards for no effect by number, as the hand is listed
    return tuple(options)


def guild_set_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """GUILD_SET: the guild sets still to choose from."""
    return tuple(ChooseGuildSet(i) for i in sorted(state.guild_sets_left))


def guild_rows_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """GUILD_ROWS: every order of the seat's three guilds."""
    return tuple(ArrangeGuilds((a, b, c)) for a, b, c in permutations(state.players[seat].guild_set))


def joker_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """JOKER_ACTION, posed once the Joker's reputation is paid: every action that can have effect."""
    return tuple(ChooseAction(a) for a in ACTION_STEPS if action_feasible(state, seat, a))


def resolve_play_card(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to PLAY_CARD: the card leaves the hand; its chosen half starts."""
    assert isinstance(option, PlayCard)
    state.players[seat].hand.remove(option.card)
    state.cards_left_in_turn -= 1
    if option.action is None:
        events.append(Event("card_played", seat, f"seat {seat} plays card {option.card} for no effect"))
        return
    events.append(
        Event("card_played", seat, f"seat {seat} plays card {option.card} for {action_words(option.action)}")
    )
    if option.action is Action.JOKER:
        change_reputation(state, seat, -joker_cost(state, seat), events)
        state.pending = PendingDecision(seat, DecisionKind.JOKER_ACTION, joker_options(state, seat))
        return
    state.agenda.append(ACTION_STEPS[option.action](seat))


def resolve_joker(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to JOKER_ACTION."""
    assert isinstance(option, ChooseAction)
    events.append(Event("joker", seat, f"seat {seat} uses the Joker for {action_words(option.action)}"))
    state.agenda.append(ACTION_STEPS[option.action](seat))


def resolve_guild_set(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to GUILD_SET."""
    assert isinstance(option, ChooseGuildSet)
    chosen = guild_sets(state)[option.index]
    state.players[seat].guild_set = chosen
    state.guild_sets_left.remove(option.index)
    events.append(Event("guild_set", seat, f"seat {seat} takes the guilds {', '.join(chosen)}"))
    if not state.guild_sets_left:
        state.phase = Phase.GUILD_ROWS


def resolve_guild_rows(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to GUILD_ROWS; after the last seat, round 1 begins."""
    assert isinstance(option, ArrangeGuilds)
    state.players[seat].guilds = option.guilds
    events.append(Event("guild_rows", seat, f"seat {seat} places its guilds: {', '.join(option.guilds)}"))
    if all(p.guilds for p in state.players):
        state.phase = Phase.TURNS
        state.turn_index = 0
        state.cards_left_in_turn = CARDS_PER_TURN[0]
        events.append(Event("round_started", state.start_seat, "round 1 begins"))
        rounds.reveal_event(state, events)


STEP_HANDLERS: dict[StepKind, StepHandler] = {
    StepKind.MINE: mine.step_mine,
    StepKind.MINE_DRAW: mine.step_mine_draw,
    StepKind.TECHNOLOGY: mine.step_technology,
    StepKind.RIGHTS: town.step_rights,
    StepKind.PLOT: town.step_plot,
    StepKind.BUILDING: town.step_building,
    StepKind.BUILDING_EFFECT: town.step_building_effect,
    StepKind.HOUSE: town.step_house,
    StepKind.INCOME: income.step_income,
    StepKind.ST_BARBARA: barbara.step_st_barbara,
    StepKind.EVENT_ADVANCES: rounds.step_event_advances,
    StepKind.TAX: rounds.step_tax,
    StepKind.PATRICIAN_SCORING: rounds.step_patrician_scoring,
    StepKind.NEXT_ROUND: rounds.step_next_round,
}

RESOLVERS: dict[DecisionKind, Resolver] = {
    DecisionKind.GUILD_SET: resolve_guild_set,
    DecisionKind.GUILD_ROWS: resolve_guild_rows,
    DecisionKind.PLAY_CARD: resolve_play_card,
    DecisionKind.JOKER_ACTION: resolve_joker,
    DecisionKind.REFILL_MINERS: mine.resolve_refill,
    DecisionKind.MINE_TILE: mine.resolve_mine_tile,
    DecisionKind.MINE_SQUARE: mine.resolve_mine_square,
    DecisionKind.TECH_SQUARE: mine.resolve_tech_square,
    DecisionKind.RIGHTS_TILE: town.resolve_rights,
    DecisionKind.PLOT_SQUARE: town.resolve_plot,
    DecisionKind.BUILD_TILE: town.resolve_build_tile,
    DecisionKind.BUILD_SQUARE: town.resolve_build_square,
    DecisionKind.REMOVE_HOUSE: town.resolve_remove_house,
    DecisionKind.PUBLIC_REWARD: town.resolve_public_reward,
    DecisionKind.SEAT_PATRICIAN: income.resolve_seat_patrician,
    DecisionKind.TAX: rounds.resolve_tax,
    DecisionKind.BARBARA_HOUSE: barbara.resolve_barbara_house,
    DecisionKind.BARBARA_PATRICIAN: barbara.resolve_barbara_patrician,
    DecisionKind.SCORE_BUILDING: barbara.resolve_score_building,
}


def _pose_outside_actions(state: GameState, events: list[Event]) -> None:
    """With no action in progress: the draft, the next card of a turn, the next turn, or the round end."""
    n = len(state.players)
    if state.phase is Phase.GUILD_SETS:
        seat = len(state.guild_sets_left) - 1  # the last seat chooses first, the starting player last
        state.pending = PendingDecision(seat, DecisionKind.GUILD_SET, guild_set_options(state, seat))
    elif state.phase is Phase.GUILD_ROWS:
        seat = next(p.seat for p in state.players if not p.guilds)
        state.pending = PendingDecision(seat, DecisionKind.GUILD_ROWS, guild_rows_options(state, seat))
    elif state.phase is Phase.TURNS:
        if state.cards_left_in_turn == 0:
            state.turn_index += 1
            if state.turn_index >= len(CARDS_PER_TURN) * n:
                rounds.begin_round_end(state)
                return
            state.cards_left_in_turn = CARDS_PER_TURN[state.turn_index // n]
        seat = (state.start_seat + state.turn_index) % n
        state.pending = PendingDecision(seat, DecisionKind.PLAY_CARD, play_card_options(state, seat))
    else:
        raise AssertionError(f"nothing to do in phase {state.phase}")


def run(state: GameState, events: list[Event]) -> None:
    """Do the engine's own work until a decision is pending or the game is over."""
    while state.pending is None and state.phase is not Phase.OVER:
        if state.agenda:
            step = state.agenda.pop()
            STEP_HANDLERS[step.kind](state, step, events)
        else:
            _pose_outside_actions(state, events)


def resolve(state: GameState, option: Option, events: list[Event]) -> None:
    """Apply an option already known to be legal, then run on to the next decision."""
    pending = state.pending
    assert pending is not None
    state.pending = None
    state.version += 1
    RESOLVERS[pending.kind](state, pending.seat, option, events)
    run(state, events)
