"""The component values as the native core reads them: one flat list of ints per component set and size.

The core does not parse ``components.json`` itself: it is given the values the engine loaded from it
(:func:`kutnahora.engine.default_components`, or any other component set), written out here in the order
``native/core/src/components.cpp`` reads them. Enumerations are written as their index in the engine's
definition order (``Guild``, ``Commodity``, ``Color``, ``Action``...), squares as row and column.
"""

from __future__ import annotations

from kutnahora.engine.components import (
    Action,
    BarbaraEffect,
    Color,
    Commodity,
    ComponentSet,
    EffectKind,
    Guild,
    HouseRewardKind,
    PriceCard,
    Side,
    Square,
)

GUILDS: tuple[Guild, ...] = tuple(Guild)
COMMODITIES: tuple[Commodity, ...] = tuple(Commodity)
COLORS: tuple[Color, ...] = tuple(Color)
ACTIONS: tuple[Action, ...] = tuple(Action)
SIDES: tuple[Side, ...] = (Side.NORTH, Side.EAST, Side.SOUTH, Side.WEST)
EFFECTS: tuple[EffectKind, ...] = tuple(EffectKind)
REWARDS: tuple[HouseRewardKind, ...] = tuple(HouseRewardKind)
BARBARA: tuple[BarbaraEffect, ...] = tuple(BarbaraEffect)
REPUTATION_TRACK = range(-5, 10)


def _index(value: object, values: tuple[object, ...]) -> int:
    return -1 if value is None else values.index(value)


def _squares(squares: tuple[Square, ...] | list[Square]) -> list[int]:
    out = [len(squares)]
    for row, col in squares:
        out += [row, col]
    return out


def _price_card(card: PriceCard, notches: int) -> list[int]:
    out: list[int] = []
    for commodity in COMMODITIES:
        prices = card.prices.get(commodity, ())
        out += [prices[i] if i < len(prices) else 0 for i in range(notches)]
    out += [len(card.town_builds), *(COMMODITIES.index(c) for c in card.town_builds)]
    out += [len(card.red_x), *(COMMODITIES.index(c) for c in card.red_x)]
    return out


def component_table(components: ComponentSet, players: int) -> list[int]:
    """The values of ``components`` a game of ``players`` seats needs, as the core reads them."""
    c = components
    out: list[int] = [players, len(c.action_cards)]
    for card in c.action_cards:
        out += [card.number, ACTIONS.index(card.top), ACTIONS.index(card.bottom)]
    out.append(len(c.buildings))
    for index, b in enumerate(c.buildings):
        if b.id != index:
            raise ValueError("the native core needs building ids equal to their index")
        out += [_index(b.guild, GUILDS), _index(b.color, COLORS)]
        out += [int(b.dots.north), int(b.dots.east), int(b.dots.south), int(b.dots.west)]
        out += [b.wood_cost, b.plot_cost, b.production, int(b.bottom), len(b.effects)]
        for e in b.effects:
            out += [EFFECTS.index(e.kind), e.amount, _index(e.color, COLORS)]
    out.append(len(c.mine_tiles))
    for index, t in enumerate(c.mine_tiles):
        if t.id != index:
            raise ValueError("the native core needs mine tile ids equal to their index")
        out += [t.tier, t.stars, t.ore, t.population, t.points, t.wood_cost, t.draws]
    out.append(len(c.technology_tiles))
    for t in c.technology_tiles:
        out += [t.id, t.tier, t.stars, t.ore, t.population, t.points, t.wood_cost, t.draws]
    out.append(len(c.rock_tiles))
    for r in c.rock_tiles:
        out += [r.id, r.stars]
    out.append(len(c.mine_setup_cards))
    for setup in c.mine_setup_cards:
        out += _squares(setup.squares)
    area = c.mine_area
    out += [area.rows, area.columns, area.entrance_cost, *area.row_stars, *_squares(area.entrances)]
    out.append(len(c.guild_setup_cards))
    for guild_card in c.guild_setup_cards:
        sets = guild_card.rows.get(players, ())
        out.append(len(sets))
        for guild_set in sets:
            out += [GUILDS.index(g) for g in guild_set]
    out.append(c.arm_notches)
    for deck in (c.population_deck, c.ore_deck):
        out.append(len(deck.cards))
        for price_card in deck.cards:
            out += _price_card(price_card, c.arm_notches)
    out.append(len(c.event_cards))
    for index, event in enumerate(c.event_cards):
        if event.id != index:
            raise ValueError("the native core needs event card ids equal to their index")
        out += [0 if event.deck == "A" else 1, event.tax, event.population, event.ore]
    out.append(len(c.barbara_tiles))
    for tile in c.barbara_tiles:
        out += [BARBARA.index(tile.effect), tile.flip_tax]
    track = c.rounds_tracks[players]
    out += [track.rounds, track.red_arrival_round, len(track.reputation_penalty), *track.reputation_penalty]
    out += [c.reputation_points[r] for r in REPUTATION_TRACK]
    for rewards in c.house_rewards:
        for reward in rewards:
            out += [REWARDS.index(reward.kind), reward.amount]
    board = c.board_for(players)
    out += [board.rows, board.columns, *_squares(sorted(board.blocked))]
    dots = sorted((d.square, SIDES.index(d.side)) for d in board.edge_dots)
    out.append(len(dots))
    for (row, col), side in dots:
        out += [row, col, side]
    out.append(len(c.town_hall_costs))
    for unit, amount in c.town_hall_costs:
        out += [0 if unit == "groschen" else 1, amount]
    out += [len(c.town_hall_rows), *(COLORS.index(color) for color in c.town_hall_rows)]
    out += [len(c.starting_groschen), *c.starting_groschen, c.patricians_per_color]
    out.append(len(c.mine_row_scoring))
    for scoring in c.mine_row_scoring:
        out += [scoring.min_stars, *scoring.points]
    out += [
        c.default_plot_cost,
        c.starting_miners_in_pool,
        c.miners_per_player,
        c.houses_per_row,
        c.plot_markers,
        c.building_slots,
        c.miner_pool_size,
        c.patrician_seat_cost,
        c.tax_limit,
    ]
    return out
