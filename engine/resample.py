"""A whole game state from one seat's observation, its hidden parts drawn at random: what a search needs.

:func:`resample` reads nothing but an :class:`~kutnahora.engine.view.Observation` (what the protocol sends
that seat, or :func:`~kutnahora.engine.view.observe`) and a seeded generator. Everything public is copied;
everything hidden is drawn uniformly from what is still possible given what the seat has seen:

- the mine tiles nobody has shown: which are in the stack and in what order (until the discards are first
  shuffled into a new stack, tier I lies above tier II above tier III, so the stack's size says how many of
  each tier it holds), which are in the discard pile (besides the ones the seat put there itself), and
  which another seat is choosing from or placing;
- every town-hall stack below its top tile (a guild stack's marked tile stays at its bottom), and the
  red-patrician buildings still to arrive;
- the events of the rounds to come, from the cards of their deck not yet revealed;
- the random generator's future.

The legal options of a decision another seat owes are not in the observation; they are worked out again
from the resampled state by :func:`pending_options`, as the rule modules work them out when they pose it.
"""

from __future__ import annotations

import random

from kutnahora.engine.component_file import default_components
from kutnahora.engine.components import ComponentSet
from kutnahora.engine.options import (
    DecisionKind,
    PendingDecision,
)
from kutnahora.engine.posing import pending_options
from kutnahora.engine.state import (
    CityTile,
    GameOptions,
    GameState,
    MinePlacement,
    Phase,
    PlayerState,
    Step,
    StepKind,
    TownHallStack,
)
from kutnahora.engine.view import Observation


class Inconsistent(ValueError):
    """The observation cannot come from a game played with these components."""


def resample(
    observation: Observation, rng: random.Random, components: ComponentSet | None = None
) -> GameState:
    """A complete state that ``observation`` could have been observed from, hidden parts drawn with ``rng``.

    Observing the result from the same viewer gives back ``observation``. Two observations that are equal
    give equal states for generators in equal states. A finished game has nothing left to draw and is
    refused with a :class:`ValueError`, as is an observation these components cannot explain.
    """
    obs = observation
    if obs.over or obs.pending is None:
        raise ValueError("the game is over: there is nothing left to resample")
    components = components or default_components()
    n = len(obs.players)
    viewer = obs.viewer
    pending = obs.pending
    own = viewer is not None and pending.seat == viewer
    phase = Phase(obs.phase)

    state = GameState(
        components=components,
        options=GameOptions(
            players=n,
            events=obs.uses_events,
            guild_setup_card=obs.guild_setup_card,
            mine_setup_card=obs.mine_setup_card,
        ),
        seed=0,  # not set up from a seed; its generator is drawn below
        rng=random.Random(),
        players=[_player(obs, seat) for seat in range(n)],
    )
    state.phase = phase
    state.round = obs.round
    state.start_seat = obs.start_seat
    state.turn_index = _turn_index(obs, phase, n)
    state.cards_left_in_turn = obs.cards_left_in_turn
    state.version = obs.version
    state.agenda = [Step(StepKind(w.kind), w.seat, w.args) for w in obs.work]
    state.guild_setup_card = obs.guild_setup_card
    state.mine_setup_card = obs.mine_setup_card
    state.guild_sets_left = list(obs.guild_sets_left)
    state.deck_position = dict(obs.deck_positions)
    state.arms = dict(obs.arms)
    state.tax = obs.tax
    state.town_discards = list(obs.town_discards)
    state.city = {v.square: CityTile(v.building, v.owner) for v in obs.city}
    state.plots = dict(obs.plots)
    state.mines = {v.square: MinePlacement(v.tile, v.owner) for v in obs.mines}
    state.rocks = dict(obs.rocks)
    state.free_action = obs.free_action
    state.technology_taken = obs.technology_taken
    state.barbara_next = obs.barbara_next
    state.patrician_bank = dict(obs.patrician_bank)
    state.patrician_pool = dict(obs.patrician_pool)
    state.council = dict(obs.council)
    state.building_in_hand = obs.building_in_hand
    state.mine_reshuffles = obs.mine_reshuffles

    _draw_town_hall(state, obs, rng)
    hand = _draw_mine_tiles(state, obs, rng, own)
    state.events = _draw_events(obs, components, phase, rng) if obs.uses_events else []
    state.rng = random.Random(rng.getrandbits(64))

    if own:
        state.pending = PendingDecision(pending.seat, pending.kind, pending.options)
    else:
        if pending.kind is DecisionKind.MINE_TILE:
            state.drawn = hand
        elif pending.kind is DecisionKind.MINE_SQUARE:
            state.kept_tile = hand[0]
        state.pending = PendingDecision(
            pending.seat, pending.kind, pending_options(state, pending.seat, pending.kind)
        )
    return state


def _player(obs: Observation, seat: int) -> PlayerState:
    v = obs.players[seat]
    return PlayerState(
        seat=v.seat,
        groschen=v.groschen,
        guild_set=v.guild_set,
        guilds=v.guilds,
        reputation=v.reputation,
        points=v.points,
        production=dict(v.production),
        mine_ore=v.mine_ore,
        houses_removed=list(v.houses_removed),
        plots=list(v.plots),
        slots=list(v.slots),
        pelicans=v.pelicans,
        pelicans_used=v.pelicans_used,
        miners_pool=v.miners_pool,
        miners_reserve=v.miners_reserve,
        hand=list(v.hand),
        buildings=list(v.buildings),
        mines=[m.square for m in obs.mines if m.owner == seat],
    )


def _turn_index(obs: Observation, phase: Phase, n: int) -> int:
    """The turn index the observation's turn, starting seat and pending seat imply."""
    if phase in (Phase.GUILD_SETS, Phase.GUILD_ROWS):
        return 0
    if phase is not Phase.TURNS:
        return 3 * n  # every seat has played its three turns
    assert obs.pending is not None
    return (obs.turn - 1) * n + (obs.pending.seat - obs.start_seat) % n


def _visible_buildings(state: GameState) -> set[int]:
    """Building tiles the observation shows somewhere: stack tops, slots, the city, the town's discards."""
    seen = set(state.town_discards)
    seen.update(tile.building for tile in state.city.values())
    for player in state.players:
        seen.update(player.slots)
    if state.building_in_hand is not None:
        seen.add(state.building_in_hand)
    return seen


def _draw_town_hall(state: GameState, obs: Observation, rng: random.Random) -> None:
    """Every town-hall stack below its top tile, and the red-patrician stack, in a random order."""
    buildings = state.components.buildings
    seen = _visible_buildings(state)
    seen.update(stack.top for row in obs.town_hall for stack in row)
    rows: list[list[TownHallStack]] = []
    for row in obs.town_hall:
        stacks = []
        for stack in row:
            if stack.label == "red":
                stacks.append(TownHallStack(stack.label, [stack.top]))
                continue
            hidden = [
                b
                for b in buildings
                if b.id not in seen
                and ((b.guild is not None and b.guild.value == stack.label) or b.color == stack.label)
            ]
            if len(hidden) != stack.size - 1:
                raise Inconsistent(
                    f"the {stack.label} stack holds {stack.size} tiles, but {len(hidden) + 1} are unseen"
                )
            bottom = [b.id for b in hidden if b.bottom]
            rest = [b.id for b in hidden if not b.bottom]
            rng.shuffle(rest)
            stacks.append(TownHallStack(stack.label, [*bottom, *rest, stack.top]))
        rows.append(stacks)
    state.town_hall = rows
    red = [b.id for b in buildings if b.color == "red" and b.id not in seen]
    if len(red) != obs.red_stack_size:
        raise Inconsistent(f"{obs.red_stack_size} red-patrician buildings are to come, {len(red)} unseen")
    rng.shuffle(red)
    state.red_stack = red


def _draw_mine_tiles(state: GameState, obs: Observation, rng: random.Random, own: bool) -> list[int]:
    """Fill the mine stack and discard pile; returns the tiles another seat holds (drawn or kept)."""
    tiles = state.components.mine_tiles
    placed = {m.tile for m in obs.mines}
    known = set(obs.drawn) | set(obs.mine_discard_seen) | placed
    if obs.kept_tile is not None:
        known.add(obs.kept_tile)
    hidden = [t.id for t in tiles if t.id not in known]
    stack_size = obs.mine_stack_size
    unknown_discards = obs.mine_discard_size - len(obs.mine_discard_seen)
    held = len(hidden) - stack_size - unknown_discards
    assert obs.pending is not None
    holder = not own and obs.pending.kind in (DecisionKind.MINE_TILE, DecisionKind.MINE_SQUARE)
    placing = holder and obs.pending.kind is DecisionKind.MINE_SQUARE
    if held < 0 or (held and not holder) or (placing and held != 1):
        raise Inconsistent(f"{len(hidden)} mine tiles are unseen: the stack and discard sizes do not fit")

    stack: list[int] = []
    if obs.mine_reshuffles == 0:
        # The stack is the bottom of the one set up: tier III at the bottom, then II, then I on top.
        tier_of = {t.id: t.tier for t in tiles}
        rest: list[int] = []
        left = stack_size
        for tier in sorted({t.tier for t in tiles}, reverse=True):
            total = sum(1 for t in tiles if t.tier == tier)
            candidates = [t for t in hidden if tier_of[t] == tier]
            count = min(left, total)
            if len(candidates) < count:
                raise Inconsistent(f"the stack holds {count} tier {tier} tiles, {len(candidates)} are unseen")
            chosen = rng.sample(candidates, count)
            stack.extend(chosen)
            taken = set(chosen)
            rest.extend(t for t in candidates if t not in taken)
            left -= count
    else:
        stack = rng.sample(hidden, stack_size)
        taken = set(stack)
        rest = [t for t in hidden if t not in taken]
    rng.shuffle(rest)
    discard = [*obs.mine_discard_seen, *rest[:unknown_discards]]
    rng.shuffle(discard)
    state.mine_stack = stack
    state.mine_discard = discard
    state.mine_discards_seen = [[] for _ in obs.players]
    if obs.viewer is not None:
        state.mine_discards_seen[obs.viewer] = list(obs.mine_discard_seen)
    state.drawn = list(obs.drawn)
    state.kept_tile = obs.kept_tile
    return rest[unknown_discards:]


def _draw_events(
    obs: Observation, components: ComponentSet, phase: Phase, rng: random.Random
) -> list[int | None]:
    """The event of every round: those revealed as they were, those to come from their deck's unseen cards.

    As at setup, rounds up to the red arrival take deck A, later rounds deck B, the last round none, and a
    round whose deck has run out none.
    """
    track = components.rounds_tracks[len(obs.players)]
    revealed_rounds = 0 if phase in (Phase.GUILD_SETS, Phase.GUILD_ROWS) else obs.round
    revealed = iter(obs.revealed_events)
    used = set(obs.revealed_events)
    decks: dict[str, list[int]] = {"A": [], "B": []}
    for card in components.event_cards:
        decks[card.deck].append(card.id)
    unseen = {name: [e for e in ids if e not in used] for name, ids in decks.items()}
    for cards in unseen.values():
        rng.shuffle(cards)
    dealt = dict.fromkeys(decks, 0)
    events: list[int | None] = []
    for round_number in range(1, track.rounds + 1):
        name = "A" if round_number <= track.red_arrival_round else "B"
        if round_number == track.rounds or dealt[name] >= len(decks[name]):
            events.append(None)
            continue
        dealt[name] += 1
        if round_number <= revealed_rounds:
            event = next(revealed, None)
            if event is None:
                raise Inconsistent(f"the event of round {round_number} has not been revealed")
            events.append(event)
        else:
            events.append(unseen[name].pop())
    return events
