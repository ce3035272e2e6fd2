"""The town: the Rights, Plot and Building actions, building effects and house effects.

Rules: 003 · The Rights action, The Plot action, The Building action, House effects; 004 · Guild
buildings, Public buildings, Patrician pool, Building effects; 000 · The Rights/Plot/Building Action.
St. Barbara's free variants reuse these steps with ``free`` set.
"""

from __future__ import annotations

from kutnahora.engine.components import (
    COMMODITY_ARM,
    Color,
    Commodity,
    Deck,
    EffectKind,
    Guild,
    HouseRewardKind,
    Square,
)
from kutnahora.engine.economy import (
    advance_deck,
    change_reputation,
    gain_production,
    move_arm,
    no_market,
    pay,
    price,
    raise_tax,
    score,
    take_from_stack,
)
from kutnahora.engine.events import Event, article, plural
from kutnahora.engine.geometry import board_squares, neighbour_table
from kutnahora.engine.options import (
    SKIP,
    ChooseGuild,
    ChooseSquare,
    ChooseTile,
    DecisionKind,
    Option,
    PendingDecision,
)
from kutnahora.engine.state import CityTile, GameState, Step, StepKind

PUBLIC_LABELS = frozenset(c.value for c in Color)
REWARD_WORDS = {
    HouseRewardKind.PUBLIC_BUILDING: "a free public building",
    HouseRewardKind.PELICAN: "a pelican",
    HouseRewardKind.REPUTATION: "reputation",
    HouseRewardKind.POINTS: "points",
}


def _pose(
    state: GameState,
    seat: int,
    kind: DecisionKind,
    options: list[Option],
    free: bool,
    nothing: str,
    events: list[Event],
) -> None:
    """Pose an action's first decision: a free one may be declined, an empty one does nothing."""
    if not options:
        events.append(Event("no_effect", seat, f"seat {seat} {nothing}"))
        return
    state.free_action = free
    state.pending = PendingDecision(seat, kind, _declinable(options, free))


def _declinable(options: list[Option], free: bool) -> tuple[Option, ...]:
    """An action's first decision as posed: a free action's may be declined."""
    return (*options, SKIP) if free else tuple(options)


def rights_tile_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """RIGHTS_TILE as posed (:func:`rights_options`, declinable when the action is free)."""
    free = state.free_action
    return _declinable(rights_options(state, seat, free=free), free)


def plot_square_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """PLOT_SQUARE as posed (:func:`plot_options`, declinable when the action is free)."""
    free = state.free_action
    return _declinable(plot_options(state, seat, free=free), free)


def build_tile_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """BUILD_TILE as posed (:func:`buildable_tiles`, declinable when the action is free)."""
    free = state.free_action
    return _declinable(buildable_tiles(state, seat, free=free), free)


# ---- Rights -------------------------------------------------------------------------------------------


def column_cost(state: GameState, column: int) -> int:
    """The Rights cost of a town-hall column in groschen: 1 groschen, then 1, 2, 3 permits."""
    unit, amount = state.components.town_hall_costs[column]
    return amount if unit == "groschen" else amount * price(state, Commodity.PERMITS)


def rights_options(state: GameState, seat: int, *, free: bool, public_only: bool = False) -> list[Option]:
    """Every top tile the seat may take now (003 · The Rights action)."""
    player = state.players[seat]
    if len(player.slots) >= state.components.building_slots:
        return []
    options: list[Option] = []
    for row in state.town_hall:
        for col, stack in enumerate(row):
            building = state.components.building(stack.tiles[-1])
            if public_only and not building.is_public:
                continue
            if building.guild is not None and building.guild not in player.guilds:
                continue
            cost = 0 if free else column_cost(state, col)
            if cost <= player.groschen:
                options.append(ChooseTile(building.id))
    return options


def rights_feasible(state: GameState, seat: int) -> bool:
    """Whether a paid Rights action has any tile to take (stops at the first one found)."""
    player = state.players[seat]
    if len(player.slots) >= state.components.building_slots:
        return False
    buildings = state.components.buildings
    permit = price(state, Commodity.PERMITS)
    column_costs = [
        amount if unit == "groschen" else amount * permit for unit, amount in state.components.town_hall_costs
    ]
    for row in state.town_hall:
        for col, stack in enumerate(row):
            guild = buildings[stack.tiles[-1]].guild
            if (guild is None or guild in player.guilds) and column_costs[col] <= player.groschen:
                return True
    return False


def step_rights(state: GameState, step: Step, events: list[Event]) -> None:
    """A Rights action; the free one (St. Barbara 2) may be declined."""
    free = bool(step.args[0])
    options = rights_options(state, step.seat, free=free)
    _pose(state, step.seat, DecisionKind.RIGHTS_TILE, options, free, "can take no building tile", events)


def _locate_top(state: GameState, tile: int) -> tuple[int, int]:
    for r, row in enumerate(state.town_hall):
        for c, stack in enumerate(row):
            if stack.tiles[-1] == tile:
                return r, c
    raise AssertionError(f"tile {tile} is not on top of a town-hall stack")


def take_rights(state: GameState, seat: int, tile: int, *, free: bool, events: list[Event]) -> None:
    """Pay for a top tile, put it in a slot, and move its stack to the end of its row."""
    row, col = _locate_top(state, tile)
    if not free:
        pay(state, seat, column_cost(state, col), "building rights", events)
    take_from_stack(state, row, col)
    state.players[seat].slots.append(tile)
    name = state.components.building(tile).name
    events.append(Event("rights", seat, f"seat {seat} takes the rights to {name}"))


def resolve_rights(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to RIGHTS_TILE."""
    if isinstance(option, ChooseTile):
        take_rights(state, seat, option.tile, free=state.free_action, events=events)


# ---- Plot ---------------------------------------------------------------------------------------------


def plot_costs(state: GameState, seat: int | None, *, free: bool) -> dict[Square, int]:
    """Every square the seat may claim and its cost in groschen (003 · The Plot action · step 1).

    ``seat`` None gives the costs before the reputation discount (what a spectator is shown).
    """
    components = state.components
    board = components.board_for(state.options.players)
    city, plots = state.city, state.plots
    costs: dict[Square, int] = {}
    if not free:
        table = neighbour_table(board)
        for square, tile in city.items():
            cost = components.buildings[tile.building].plot_cost
            for other in table[square]:
                if other not in city and other not in plots and costs.get(other, -1) < cost:
                    costs[other] = cost
    if not costs:
        base = 0 if free else components.default_plot_cost
        costs = {sq: base for sq in board_squares(board) if sq not in city and sq not in plots}
        if free:
            return costs
    if seat is not None and state.players[seat].reputation >= 3:
        costs = dict.fromkeys(costs, 1)
    return costs


def plot_options(state: GameState, seat: int, *, free: bool) -> list[Option]:
    """Squares the seat can claim and afford; none without a plot marker left."""
    player = state.players[seat]
    if len(player.plots) >= state.components.plot_markers:
        return []
    return [
        ChooseSquare(r, c)
        for (r, c), cost in sorted(plot_costs(state, seat, free=free).items())
        if cost <= player.groschen
    ]


def plot_feasible(state: GameState, seat: int) -> bool:
    """Whether a paid Plot action has a square the seat can afford: :func:`plot_costs`' cheapest square,
    found without listing every square of an empty city."""
    components = state.components
    player = state.players[seat]
    if len(player.plots) >= components.plot_markers:
        return False
    city, plots = state.city, state.plots
    costs: dict[Square, int] = {}
    if city:
        table = neighbour_table(components.board_for(state.options.players))
        buildings = components.buildings
        for square, tile in city.items():
            cost = buildings[tile.building].plot_cost
            for other in table[square]:
                if other not in city and other not in plots and costs.get(other, -1) < cost:
                    costs[other] = cost
    if costs:
        cheapest = min(costs.values())
    else:
        board = components.board_for(state.options.players)
        if all(sq in city or sq in plots for sq in board_squares(board)):
            return False
        cheapest = components.default_plot_cost
    if player.reputation >= 3:
        cheapest = 1
    return cheapest <= player.groschen


def step_plot(state: GameState, step: Step, events: list[Event]) -> None:
    """A Plot action; the free one (St. Barbara 4) may be declined."""
    free = bool(step.args[0])
    options = plot_options(state, step.seat, free=free)
    _pose(state, step.seat, DecisionKind.PLOT_SQUARE, options, free, "can claim no plot", events)


def resolve_plot(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to PLOT_SQUARE: pay and place the leftmost plot marker."""
    if not isinstance(option, ChooseSquare):
        return
    square = (option.row, option.col)
    cost = plot_costs(state, seat, free=state.free_action)[square]
    pay(state, seat, cost, "a plot", events)
    state.players[seat].plots.append(square)
    state.plots[square] = seat
    events.append(Event("plot", seat, f"seat {seat} claims the plot at {square[0]},{square[1]}"))


# ---- Building -----------------------------------------------------------------------------------------


def house_row(state: GameState, seat: int, tile: int) -> int | None:
    """The row of the seat's board for a guild building's guild; None for a public building."""
    guild = state.components.building(tile).guild
    return None if guild is None else state.players[seat].guilds.index(guild)


def buildable_tiles(state: GameState, seat: int, *, free: bool) -> list[Option]:
    """Tiles in the seat's slots it can build now: a plot, a market (no red X), a house, the wood."""
    player = state.players[seat]
    if not player.plots:
        return []
    wood = 0 if free else price(state, Commodity.WOOD)
    options: list[Option] = []
    for tile in sorted(set(player.slots)):
        building = state.components.building(tile)
        if building.commodity is not None:
            if no_market(state, building.commodity):
                continue
            row = house_row(state, seat, tile)
            assert row is not None
            if player.houses_removed[row] >= state.components.houses_per_row:
                continue
        if building.wood_cost * wood <= player.groschen:
            options.append(ChooseTile(tile))
    return options


def building_feasible(state: GameState, seat: int) -> bool:
    """Whether :func:`buildable_tiles` (paid) lists any tile, stopping at the first one found."""
    player = state.players[seat]
    if not player.plots:
        return False
    wood = price(state, Commodity.WOOD)
    limit = state.components.houses_per_row
    buildings = state.components.buildings
    for tile in player.slots:
        building = buildings[tile]
        commodity = building.commodity
        if commodity is not None:
            if no_market(state, commodity):
                continue
            row = house_row(state, seat, tile)
            assert row is not None
            if player.houses_removed[row] >= limit:
                continue
        if building.wood_cost * wood <= player.groschen:
            return True
    return False


def step_building(state: GameState, step: Step, events: list[Event]) -> None:
    """A Building action; the free one (St. Barbara 8) pays no wood and may be declined."""
    free = bool(step.args[0])
    options = buildable_tiles(state, step.seat, free=free)
    _pose(state, step.seat, DecisionKind.BUILD_TILE, options, free, "can build nothing", events)


def resolve_build_tile(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to BUILD_TILE: then choose one of the seat's plots."""
    if not isinstance(option, ChooseTile):
        return
    state.building_in_hand = option.tile
    state.pending = PendingDecision(seat, DecisionKind.BUILD_SQUARE, build_square_options(state, seat))


def build_square_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """BUILD_SQUARE: every plot of the seat."""
    return tuple(ChooseSquare(r, c) for r, c in sorted(state.players[seat].plots))


def resolve_build_square(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to BUILD_SQUARE: pay the wood, place the tile, then its effects, then the house."""
    assert isinstance(option, ChooseSquare) and state.building_in_hand is not None
    tile = state.building_in_hand
    state.building_in_hand = None
    square = (option.row, option.col)
    building = state.components.building(tile)
    player = state.players[seat]
    if not state.free_action:
        pay(
            state,
            seat,
            building.wood_cost * price(state, Commodity.WOOD),
            f"wood for {building.name}",
            events,
        )
    player.plots.remove(square)
    del state.plots[square]
    player.slots.remove(tile)
    owner = None if building.is_public else seat
    state.city[square] = CityTile(tile, owner)
    events.append(Event("built", seat, f"seat {seat} builds {building.name} at {square[0]},{square[1]}"))
    if building.commodity is not None:
        player.buildings.append(tile)
        state.agenda.append(Step(StepKind.HOUSE, seat, (tile,)))
    for index in reversed(range(len(building.effects))):
        state.agenda.append(Step(StepKind.BUILDING_EFFECT, seat, (tile, index)))
    if building.commodity is not None:
        gain_production(state, seat, building.commodity, building.production, events)


def step_building_effect(state: GameState, step: Step, events: list[Event]) -> None:
    """Resolve one printed effect of a building just built (004 · Building effects)."""
    seat = step.seat
    tile, index = step.args
    building = state.components.building(tile)
    effect = building.effects[index]
    player = state.players[seat]
    match effect.kind:
        case EffectKind.ARM:
            assert building.commodity is not None
            move_arm(state, COMMODITY_ARM[building.commodity], events)
        case EffectKind.MINING_TECHNOLOGY:
            state.agenda.append(Step(StepKind.TECHNOLOGY, seat))
        case EffectKind.ORE_DECK:
            advance_deck(state, Deck.ORE, effect.amount, events)
        case EffectKind.POPULATION_DECK:
            advance_deck(state, Deck.POPULATION, effect.amount, events)
        case EffectKind.POINTS:
            score(state, seat, effect.amount, building.name, events)
        case EffectKind.REPUTATION:
            change_reputation(state, seat, effect.amount, events)
        case EffectKind.PELICANS:
            player.pelicans += effect.amount
            events.append(
                Event("pelicans", seat, f"seat {seat} takes {plural(effect.amount, 'pelican token')}")
            )
        case EffectKind.TAX:
            raise_tax(state, effect.amount, events)
        case EffectKind.PATRICIAN:
            assert effect.color is not None
            patrician_to_pool(state, effect.color, events)
        case EffectKind.REMOVE_HOUSE:
            options = remove_house_options(state, seat, keep=house_row(state, seat, tile))
            if len(options) > 1:
                state.pending = PendingDecision(seat, DecisionKind.REMOVE_HOUSE, options)
        case EffectKind.FLIP_ST_BARBARA:
            flip_st_barbara(state, events)


def patrician_to_pool(state: GameState, color: Color, events: list[Event]) -> None:
    """Move a patrician from the bank to the pool; with none left in the bank, nothing happens."""
    if state.patrician_bank[color] > 0:
        state.patrician_bank[color] -= 1
        state.patrician_pool[color] += 1
        events.append(Event("patrician", None, f"a {color} patrician joins the pool"))


def flip_st_barbara(state: GameState, events: list[Event]) -> None:
    """A guild building flips the current St. Barbara tile: nobody benefits, its tax is added."""
    tiles = state.components.barbara_tiles
    if state.barbara_next > len(tiles):
        return
    tile = tiles[state.barbara_next - 1]
    state.barbara_next += 1
    events.append(Event("barbara_flipped", None, f"St. Barbara tile {tile.number} is flipped unused"))
    raise_tax(state, tile.flip_tax, events)


def removable_rows(state: GameState, seat: int, keep: int | None = None) -> list[Guild]:
    """Guilds whose row on the seat's board still has a house.

    ``keep`` is the row of a guild building being built: its own house is still to be placed
    (003 · The Building action · step 5), so that row must keep one house.
    """
    player = state.players[seat]
    limit = state.components.houses_per_row
    return [
        g
        for row, g in enumerate(player.guilds)
        if player.houses_removed[row] < limit - (1 if row == keep else 0)
    ]


def remove_house_options(state: GameState, seat: int, keep: int | None) -> tuple[Option, ...]:
    """REMOVE_HOUSE: a guild row to remove a house from (``keep`` keeps one, see :func:`removable_rows`), or
    none."""
    return (*(ChooseGuild(g) for g in removable_rows(state, seat, keep=keep)), SKIP)


def posed_remove_house_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """REMOVE_HOUSE as posed in ``state``: a guild building being built keeps one house for itself, its
    HOUSE step still to come on the agenda."""
    houses = [s for s in state.agenda if s.kind is StepKind.HOUSE and s.seat == seat]
    keep = house_row(state, seat, houses[-1].args[0]) if houses else None
    return remove_house_options(state, seat, keep)


def remove_house(state: GameState, seat: int, guild_row: int, events: list[Event]) -> None:
    """Take the leftmost house off a row, ignoring the reward beneath it."""
    state.players[seat].houses_removed[guild_row] += 1
    guild = state.players[seat].guilds[guild_row]
    events.append(Event("house_removed", seat, f"seat {seat} removes {article(guild)} house"))


def resolve_remove_house(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to REMOVE_HOUSE."""
    if isinstance(option, ChooseGuild):
        remove_house(state, seat, state.players[seat].guilds.index(option.guild), events)


def public_reward_options(state: GameState, seat: int) -> list[Option]:
    """Top tiles of the public stacks, for a free take; none when the slots are full."""
    if len(state.players[seat].slots) >= state.components.building_slots:
        return []
    return [
        ChooseTile(stack.tiles[-1])
        for row in state.town_hall
        for stack in row
        if stack.label in PUBLIC_LABELS
    ]


def public_reward_choices(state: GameState, seat: int) -> tuple[Option, ...]:
    """PUBLIC_REWARD: one of :func:`public_reward_options`, or none."""
    return (*public_reward_options(state, seat), SKIP)


def step_house(state: GameState, step: Step, events: list[Event]) -> None:
    """Mark a guild building with its row's leftmost house and take the reward (003 · House effects)."""
    seat = step.seat
    row = house_row(state, seat, step.args[0])
    assert row is not None
    player = state.players[seat]
    column = player.houses_removed[row]
    player.houses_removed[row] += 1
    reward = state.components.house_rewards[row][column]
    guild = player.guilds[row]
    shows = REWARD_WORDS[reward.kind]
    events.append(Event("house", seat, f"seat {seat} places {article(guild)} house; its space shows {shows}"))
    match reward.kind:
        case HouseRewardKind.PUBLIC_BUILDING:
            reward_options = public_reward_choices(state, seat)
            if len(reward_options) > 1:
                state.pending = PendingDecision(seat, DecisionKind.PUBLIC_REWARD, reward_options)
        case HouseRewardKind.PELICAN:
            player.pelicans += max(1, reward.amount)
        case HouseRewardKind.REPUTATION:
            change_reputation(state, seat, reward.amount, events)
        case HouseRewardKind.POINTS:
            score(state, seat, reward.amount, "a house", events)


def resolve_public_reward(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to PUBLIC_REWARD: take the public tile for free."""
    if isinstance(option, ChooseTile):
        take_rights(state, seat, option.tile, free=True, events=events)
