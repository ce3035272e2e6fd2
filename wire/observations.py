"""Observations both ways: the engine's :class:`~kutnahora.engine.Observation` as a wire ``Observation``
(:func:`observation_to_wire`), and a wire observation read back into the engine's
(:func:`engine_observation`).

For every position, ``engine_observation(observation_to_wire(observe(state, seat), game_id)) ==
observe(state, seat)``: a bot that searches with the engine as a library receives what every bot receives,
the wire observation, and reads it back into the view :func:`kutnahora.engine.resample` turns into whole
states. Legal options are read back from their canonical text (``LegalOption.text``,
:func:`~kutnahora.engine.parse_option`), which the protocol guarantees to be the engine's own text form.

What a seat is sent is decided in :func:`kutnahora.wire.seat_observation.encode_observation` and written by
:class:`kutnahora.wire.encoder.ObservationEncoder`, which caches the bytes of each part; it writes those
parts with the functions here (:func:`add_market`, :func:`write_stable_header`...), so both give the same
message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kutnahora.engine import Cost, Observation, Option, option_text, parse_option
from kutnahora.engine.components import COMMODITIES, Action, Commodity, Square
from kutnahora.engine.view import CityTileView, MineView, PendingView, PlayerView, StackView, WorkStep
from kutnahora.v1 import game_pb2
from kutnahora.wire.decisions import decision_payload, option_cost_to_wire
from kutnahora.wire.values import (
    ACTION,
    ARM,
    ARM_BACK,
    COLOR,
    COLOR_BACK,
    COLOR_BY_VALUE,
    COMMODITY,
    COMMODITY_BACK,
    DECISION_KIND,
    DECISION_KIND_BACK,
    DECK,
    DECK_BACK,
    GUILD,
    GUILD_BACK,
    GUILD_BY_VALUE,
    PHASE_BACK,
    PHASE_BY_VALUE,
    set_square,
    square_from_wire,
)

Unavailable = tuple[int, Action, str]
"""A card half not offered with effect: its card, its action, and why (``text.unavailable_actions``)."""

SquareCosts = tuple[Sequence[tuple[Square, int]], Sequence[tuple[Square, int]]]
"""The open mine squares with their wood cost and the claimable plots with their groschen, row-major."""


def observation_to_wire(
    obs: Observation,
    game_id: str,
    question: str = "",
    describe: Callable[[Option], str] | None = None,
    cost: Callable[[Option], Cost] | None = None,
    squares: SquareCosts | None = None,
    unavailable: Sequence[Unavailable] = (),
) -> game_pb2.Observation:
    """Build the wire observation from the engine's (already redacted) one.

    ``question`` words the pending decision, ``describe`` gives each legal option a readable
    description and ``cost`` its cost (:func:`kutnahora.engine.option_cost`); ``squares`` are the open
    mine squares and plots with their costs (:func:`kutnahora.engine.costs.mine_squares`, ``plot_squares``).
    ``unavailable`` lists the card halves not offered with effect, and why (for the seat that owes a card
    play). All are optional. What a seat is sent, with all of them, is
    :func:`kutnahora.wire.seat_observation.encode_observation`'s (through the cached
    :class:`~kutnahora.wire.encoder.ObservationEncoder`, which produces the same message, serialised,
    several times faster); this function is the plain reference.
    """
    wire = _header(obs, game_id)
    add_market(wire, obs)
    add_town_hall(wire, obs)
    add_boards(wire, obs)
    add_patricians(wire, obs)
    for player in obs.players:
        _add_player(wire, player)
    if obs.pending is not None:
        _add_pending(wire, obs.pending, question, describe, cost)
        for card, action, reason in unavailable:
            wire.pending.unavailable.add(card=card, action=ACTION[action], reason=reason)
    if squares is not None:
        _add_square_costs(wire, obs, squares)
    return wire


SquareCostsOf = tuple[Callable[[], Sequence[tuple[Square, int]]], Callable[[], Sequence[tuple[Square, int]]]]
"""What gives the open mine squares and what gives the claimable plots (see :data:`SquareCosts`)."""


def _add_square_costs(wire: game_pb2.Observation, obs: Observation, squares: SquareCosts) -> None:
    _add_mine_squares(wire, obs, squares[0])
    _add_plot_squares(wire, squares[1])


def _add_mine_squares(
    wire: game_pb2.Observation, obs: Observation, mines: Sequence[tuple[Square, int]]
) -> None:
    wood = dict(obs.prices)[Commodity.WOOD]
    for square, amount in mines:
        entry = wire.mine_squares.add(wood=amount, groschen=amount * wood)
        set_square(entry.square, square)


def _add_plot_squares(wire: game_pb2.Observation, plots: Sequence[tuple[Square, int]]) -> None:
    for square, groschen in plots:
        set_square(wire.plot_squares.add(groschen=groschen).square, square)


def _header(obs: Observation, game_id: str) -> game_pb2.Observation:
    wire = game_pb2.Observation(
        version=obs.version,
        turn=obs.turn,
        cards_left_in_turn=obs.cards_left_in_turn,
        drawn=obs.drawn,
        scores=obs.scores,
    )
    if obs.viewer is not None:
        wire.viewer = obs.viewer
    if obs.kept_tile is not None:
        wire.kept_tile = obs.kept_tile
    write_stable_header(wire, obs, game_id)
    add_step = wire.work.add
    for step in obs.work:
        add_step(kind=step.kind, seat=step.seat, args=step.args)
    wire.mine_reshuffles = obs.mine_reshuffles
    wire.mine_discard_seen.extend(obs.mine_discard_seen)
    return wire


def write_stable_header(wire: game_pb2.Observation, obs: Observation, game_id: str) -> None:
    """The header's fields that change seldom (:data:`STABLE_HEADER_FIELDS`, and the game id)."""
    wire.game_id = game_id
    wire.phase = PHASE_BY_VALUE[obs.phase]
    wire.round = obs.round
    wire.rounds = obs.rounds
    wire.start_seat = obs.start_seat
    wire.tax = obs.tax
    wire.red_stack_size = obs.red_stack_size
    wire.town_discards.extend(obs.town_discards)
    wire.mine_stack_size = obs.mine_stack_size
    wire.mine_discard_size = obs.mine_discard_size
    wire.technology_taken = obs.technology_taken
    wire.mine_draws = obs.mine_draws
    wire.barbara_next = obs.barbara_next
    wire.revealed_events.extend(obs.revealed_events)
    wire.guild_setup_card = obs.guild_setup_card
    wire.mine_setup_card = obs.mine_setup_card
    wire.guild_sets_left.extend(obs.guild_sets_left)
    wire.over = obs.over
    if obs.current_event is not None:
        wire.current_event = obs.current_event
    if obs.building_in_hand is not None:
        wire.building_in_hand = obs.building_in_hand
    wire.uses_events = obs.uses_events
    wire.free_action = obs.free_action


def add_market(wire: game_pb2.Observation, obs: Observation) -> None:
    add_deck = wire.deck_positions.add
    for deck, position in obs.deck_positions:
        add_deck(deck=DECK[deck], position=position)
    add_arm = wire.arms.add
    for arm, notch in obs.arms:
        add_arm(arm=ARM[arm], notch=notch)
    no_market = set(obs.no_market)
    add_price = wire.prices.add
    for commodity, price in obs.prices:
        add_price(commodity=COMMODITY[commodity], price=price, no_market=commodity in no_market)


def add_town_hall(wire: game_pb2.Observation, obs: Observation) -> None:
    for row in obs.town_hall:
        stacks = wire.town_hall.add().stacks
        for stack in row:
            guild = GUILD_BY_VALUE.get(stack.label)
            if guild is not None:
                stacks.add(guild=guild, top=stack.top, size=stack.size)
            else:
                stacks.add(color=COLOR_BY_VALUE.get(stack.label, 0), top=stack.top, size=stack.size)


def add_boards(wire: game_pb2.Observation, obs: Observation) -> None:
    for tile in obs.city:
        city = wire.city.add(building=tile.building)
        set_square(city.square, tile.square)
        if tile.owner is not None:
            city.owner = tile.owner
    for square, seat in obs.plots:
        set_square(wire.plots.add(seat=seat).square, square)
    for mine in obs.mines:
        set_square(wire.mines.add(tile=mine.tile, owner=mine.owner).square, mine.square)
    for square, rock in obs.rocks:
        set_square(wire.rocks.add(tile=rock).square, square)


def add_patricians(wire: game_pb2.Observation, obs: Observation) -> None:
    for target, counts in (
        (wire.patrician_bank, obs.patrician_bank),
        (wire.patrician_pool, obs.patrician_pool),
        (wire.council, obs.council),
    ):
        add = target.add
        for color, count in counts:
            add(color=COLOR[color], count=count)


def _add_player(wire: game_pb2.Observation, player: PlayerView) -> None:
    board = wire.players.add(
        seat=player.seat,
        groschen=player.groschen,
        reputation=player.reputation,
        points=player.points,
        guild_set=[GUILD[g] for g in player.guild_set],
        guilds=[GUILD[g] for g in player.guilds],
        mine_ore=player.mine_ore,
        income=player.income,
        tax_due=player.tax_due,
        houses_removed=player.houses_removed,
        slots=player.slots,
        pelicans=player.pelicans,
        pelicans_used=player.pelicans_used,
        miners_pool=player.miners_pool,
        miners_reserve=player.miners_reserve,
        hand=player.hand,
        buildings=player.buildings,
    )
    add = board.production.add
    for commodity, amount in player.production:
        add(commodity=COMMODITY[commodity], amount=amount)
    for square in player.plots:
        set_square(board.plots.add(), square)


def add_player_seldom(board: game_pb2.PlayerBoard, player: PlayerView) -> None:
    """The fields of a player's board that the server's encoder caches apart."""
    board.guild_set.extend([GUILD[g] for g in player.guild_set])
    board.guilds.extend([GUILD[g] for g in player.guilds])
    add = board.production.add
    for commodity, amount in player.production:
        add(commodity=COMMODITY[commodity], amount=amount)
    board.houses_removed.extend(player.houses_removed)
    for square in player.plots:
        set_square(board.plots.add(), square)
    board.buildings.extend(player.buildings)


def _add_pending(
    wire: game_pb2.Observation,
    pending: PendingView,
    question: str,
    describe: Callable[[Option], str] | None,
    cost: Callable[[Option], Cost] | None = None,
) -> None:
    wire_pending = wire.pending
    wire_pending.seat = pending.seat
    wire_pending.kind = DECISION_KIND[pending.kind]
    wire_pending.question = question
    add = wire_pending.options.add
    for index, option in enumerate(pending.options):
        entry = add(index=index, text=option_text(option))
        if describe is not None:
            entry.description = describe(option)
        entry.decision.CopyFrom(decision_payload(option))
        if cost is not None:
            option_cost = cost(option)
            if option_cost:
                entry.cost.CopyFrom(option_cost_to_wire(option_cost))


STABLE_HEADER_FIELDS = (
    "phase",
    "round",
    "rounds",
    "start_seat",
    "tax",
    "red_stack_size",
    "town_discards",
    "mine_stack_size",
    "mine_discard_size",
    "technology_taken",
    "mine_draws",
    "barbara_next",
    "revealed_events",
    "current_event",
    "guild_setup_card",
    "mine_setup_card",
    "guild_sets_left",
    "building_in_hand",
    "over",
    "uses_events",
    "free_action",
)
"""The observation's fields that :func:`write_stable_header` writes (with the game id): those that change
seldom, which the server's encoder caches together as one part. ``_header`` writes the others (version,
viewer, turn, cards left, drawn tiles, kept tile, scores, the engine's work, the reshuffles, the viewer's
discards seen)."""


# --- wire to engine -----------------------------------------------------------------------------------


def _player_view(board: game_pb2.PlayerBoard) -> PlayerView:
    return PlayerView(
        seat=board.seat,
        groschen=board.groschen,
        reputation=board.reputation,
        points=board.points,
        guild_set=tuple(GUILD_BACK[g] for g in board.guild_set),
        guilds=tuple(GUILD_BACK[g] for g in board.guilds),
        production=tuple((COMMODITY_BACK[p.commodity], p.amount) for p in board.production),
        mine_ore=board.mine_ore,
        income=board.income,
        tax_due=board.tax_due,
        houses_removed=tuple(board.houses_removed),
        plots=tuple(square_from_wire(s) for s in board.plots),
        slots=tuple(board.slots),
        pelicans=board.pelicans,
        pelicans_used=board.pelicans_used,
        miners_pool=board.miners_pool,
        miners_reserve=board.miners_reserve,
        hand=tuple(board.hand),
        buildings=tuple(board.buildings),
    )


def _stack_view(stack: game_pb2.TownHallStack) -> StackView:
    label = GUILD_BACK[stack.guild].value if stack.guild else COLOR_BACK[stack.color].value
    return StackView(label, stack.top, stack.size)


def _pending_view(wire: game_pb2.Observation) -> PendingView | None:
    if not wire.HasField("pending"):
        return None
    pending = wire.pending
    options = tuple(parse_option(o.text) for o in sorted(pending.options, key=lambda o: o.index))
    return PendingView(pending.seat, DECISION_KIND_BACK[pending.kind], options)


def engine_observation(wire: game_pb2.Observation) -> Observation:
    """The engine's observation that ``wire`` was built from (``KeyError`` for an unknown enum value)."""
    no_market = {COMMODITY_BACK[p.commodity] for p in wire.prices if p.no_market}
    return Observation(
        viewer=wire.viewer if wire.HasField("viewer") else None,
        version=wire.version,
        phase=PHASE_BACK[wire.phase].value,
        round=wire.round,
        rounds=wire.rounds,
        start_seat=wire.start_seat,
        turn=wire.turn,
        cards_left_in_turn=wire.cards_left_in_turn,
        deck_positions=tuple((DECK_BACK[d.deck], d.position) for d in wire.deck_positions),
        arms=tuple((ARM_BACK[a.arm], a.notch) for a in wire.arms),
        prices=tuple((COMMODITY_BACK[p.commodity], p.price) for p in wire.prices),
        no_market=tuple(c for c in COMMODITIES if c in no_market),
        tax=wire.tax,
        town_hall=tuple(tuple(_stack_view(s) for s in row.stacks) for row in wire.town_hall),
        red_stack_size=wire.red_stack_size,
        town_discards=tuple(wire.town_discards),
        city=tuple(
            CityTileView(square_from_wire(t.square), t.building, t.owner if t.HasField("owner") else None)
            for t in wire.city
        ),
        plots=tuple((square_from_wire(p.square), p.seat) for p in wire.plots),
        mines=tuple(MineView(square_from_wire(m.square), m.tile, m.owner) for m in wire.mines),
        rocks=tuple((square_from_wire(r.square), r.tile) for r in wire.rocks),
        mine_stack_size=wire.mine_stack_size,
        mine_discard_size=wire.mine_discard_size,
        technology_taken=wire.technology_taken,
        mine_draws=wire.mine_draws,
        barbara_next=wire.barbara_next,
        patrician_bank=tuple((COLOR_BACK[p.color], p.count) for p in wire.patrician_bank),
        patrician_pool=tuple((COLOR_BACK[p.color], p.count) for p in wire.patrician_pool),
        council=tuple((COLOR_BACK[p.color], p.count) for p in wire.council),
        revealed_events=tuple(wire.revealed_events),
        current_event=wire.current_event if wire.HasField("current_event") else None,
        guild_setup_card=wire.guild_setup_card,
        mine_setup_card=wire.mine_setup_card,
        guild_sets_left=tuple(wire.guild_sets_left),
        building_in_hand=wire.building_in_hand if wire.HasField("building_in_hand") else None,
        players=tuple(_player_view(b) for b in wire.players),
        pending=_pending_view(wire),
        drawn=tuple(wire.drawn),
        kept_tile=wire.kept_tile if wire.HasField("kept_tile") else None,
        over=wire.over,
        scores=tuple(wire.scores),
        uses_events=wire.uses_events,
        free_action=wire.free_action,
        work=tuple(WorkStep(w.kind, w.seat, tuple(w.args)) for w in wire.work),
        mine_reshuffles=wire.mine_reshuffles,
        mine_discard_seen=tuple(wire.mine_discard_seen),
    )
