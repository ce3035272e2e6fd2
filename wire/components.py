"""The component set as a wire ``ComponentSet`` (the server builds it once and sends its bytes)."""

from __future__ import annotations

from kutnahora.engine.components import ComponentSet
from kutnahora.v1 import components_pb2
from kutnahora.wire.values import (
    ACTION,
    BARBARA_EFFECT,
    COLOR,
    COMMODITY,
    CURRENCY,
    DECK,
    EFFECT_KIND,
    GUILD,
    HOUSE_REWARD_KIND,
    SIDE,
    set_square,
)


def components_to_wire(components: ComponentSet) -> components_pb2.ComponentSet:
    """The whole component set as a wire message (built once by the server and reused)."""
    wire = components_pb2.ComponentSet(
        name=components.name,
        reconstructed=components.reconstructed,
        arm_notches=components.arm_notches,
        town_hall_rows=[COLOR[c] for c in components.town_hall_rows],
        starting_groschen=components.starting_groschen,
        patricians_per_color=components.patricians_per_color,
        default_plot_cost=components.default_plot_cost,
        starting_miners_in_pool=components.starting_miners_in_pool,
        miners_per_player=components.miners_per_player,
        houses_per_row=components.houses_per_row,
        plot_markers=components.plot_markers,
        building_slots=components.building_slots,
        miner_pool_size=components.miner_pool_size,
        patrician_seat_cost=components.patrician_seat_cost,
        tax_limit=components.tax_limit,
    )
    for card in components.action_cards:
        wire.action_cards.add(number=card.number, top=ACTION[card.top], bottom=ACTION[card.bottom])
    for building in components.buildings:
        entry = wire.buildings.add(
            id=building.id,
            name=building.name,
            guild=GUILD[building.guild] if building.guild is not None else 0,
            color=COLOR[building.color] if building.color is not None else 0,
            dots=components_pb2.Dots(
                north=building.dots.north,
                east=building.dots.east,
                south=building.dots.south,
                west=building.dots.west,
            ),
            wood_cost=building.wood_cost,
            plot_cost=building.plot_cost,
            production=building.production,
            bottom=building.bottom,
            commodity=COMMODITY[building.commodity] if building.commodity is not None else 0,
        )
        for effect in building.effects:
            entry.effects.add(
                kind=EFFECT_KIND[effect.kind],
                amount=effect.amount,
                color=COLOR[effect.color] if effect.color is not None else 0,
            )
    for target, tiles in (
        (wire.mine_tiles, components.mine_tiles),
        (wire.technology_tiles, components.technology_tiles),
    ):
        for tile in tiles:
            target.add(
                id=tile.id,
                tier=tile.tier,
                stars=tile.stars,
                ore=tile.ore,
                population=tile.population,
                points=tile.points,
                wood_cost=tile.wood_cost,
                draws=tile.draws,
            )
    for rock in components.rock_tiles:
        wire.rock_tiles.add(id=rock.id, stars=rock.stars)
    for setup in components.mine_setup_cards:
        card_entry = wire.mine_setup_cards.add(id=setup.id)
        for square in setup.squares:
            set_square(card_entry.squares.add(), square)
    area = components.mine_area
    wire.mine_area.rows = area.rows
    wire.mine_area.columns = area.columns
    wire.mine_area.row_stars.extend(area.row_stars)
    wire.mine_area.entrance_cost = area.entrance_cost
    for square in area.entrances:
        set_square(wire.mine_area.entrances.add(), square)
    for guild_card in components.guild_setup_cards:
        guild_entry = wire.guild_setup_cards.add(id=guild_card.id)
        for players in sorted(guild_card.rows):
            row = guild_entry.rows.add(players=players)
            for guild_set in guild_card.rows[players]:
                row.sets.add(guilds=[GUILD[g] for g in guild_set])
    for target_deck, deck in (
        (wire.population_deck, components.population_deck),
        (wire.ore_deck, components.ore_deck),
    ):
        target_deck.deck = DECK[deck.deck]
        target_deck.turn_over_after = deck.turn_over_after
        for price_card in deck.cards:
            card_wire = target_deck.cards.add(
                number=price_card.number,
                town_builds=[COMMODITY[c] for c in price_card.town_builds],
                red_x=[COMMODITY[c] for c in price_card.red_x],
            )
            for commodity, prices in price_card.prices.items():
                card_wire.prices.add(commodity=COMMODITY[commodity], prices=prices)
    for event in components.event_cards:
        wire.event_cards.add(
            id=event.id,
            deck=event.deck,
            name=event.name,
            tax=event.tax,
            population=event.population,
            ore=event.ore,
        )
    for barbara in components.barbara_tiles:
        wire.barbara_tiles.add(
            number=barbara.number, effect=BARBARA_EFFECT[barbara.effect], flip_tax=barbara.flip_tax
        )
    for players, track in sorted(components.rounds_tracks.items()):
        wire.rounds_tracks.add(
            players=players,
            rounds=track.rounds,
            reputation_penalty=track.reputation_penalty,
            red_arrival_round=track.red_arrival_round,
        )
    for reputation, points in sorted(components.reputation_points.items()):
        wire.reputation_points.add(reputation=reputation, points=points)
    for reward_row in components.house_rewards:
        row_wire = wire.house_rewards.add()
        for reward in reward_row:
            row_wire.rewards.add(kind=HOUSE_REWARD_KIND[reward.kind], amount=reward.amount)
    for board in components.city_boards.values():
        board_wire = wire.city_boards.add(name=board.name, rows=board.rows, columns=board.columns)
        for square in sorted(board.blocked):
            set_square(board_wire.blocked.add(), square)
        for dot in sorted(board.edge_dots, key=lambda d: (d.square, d.side.value)):
            dot_wire = board_wire.edge_dots.add(side=SIDE[dot.side])
            set_square(dot_wire.square, dot.square)
    for currency, amount in components.town_hall_costs:
        wire.town_hall_costs.add(currency=CURRENCY[currency], amount=amount)
    for scoring in components.mine_row_scoring:
        wire.mine_row_scoring.add(min_stars=scoring.min_stars, points=scoring.points)
    return wire
