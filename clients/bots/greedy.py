"""The greedy bot: scores every listed option with a one-step heuristic and takes the best.

It reads only what the server sends: the observation (prices, boards, town hall, city, mines, ...) and
the component set (``GameService.GetComponents``: building costs and effects, mine tiles, price decks,
board geometry, house rewards, tracks). It never simulates the rules; it estimates. Prices come from the
server too: each listed option's cost (``LegalOption.cost``, as the engine charges it) and the open mine
squares and plots with their prices (``Observation.mine_squares``, ``Observation.plot_squares``), so the bot
keeps no copy of the pricing rules of plots and mines.

The heuristic, in points
------------------------
Every option is valued in *points*, the unit that wins. Groschen convert to points at a rate that falls
as the game runs out: ``money = 0.04 + 0.18 × (share of the game left)`` points per groschen, because
money early buys production and buildings, and money at the end only breaks ties.

- **Production** of a commodity is worth its *current price* × (expected Income actions left × the
  money rate) + price / 10 (the end-game income score). Expected Income actions: one per later round,
  plus a half while an Income card is still in hand this round.
- **Reputation** is worth what the reputation track pays for the new space at the end (2 points a step
  beyond either end), plus a bonus for reaching 3 (plots cost 1) and 6 (free Joker).
- **A guild building** is worth its production, its printed effects (points, reputation, pelicans,
  a free mining-technology mine; moving its own arm lowers the price of what we already produce; tax
  and St. Barbara flips cost a little), the reward under the next house of its row, and its *matching
  dots* on the chosen square (against neighbours and printed edge dots, plus a little for dots facing
  empty squares), minus its wood cost at today's wood price. **A public building**: its effects, its
  dots for our neighbouring buildings, and green-patrician neighbours.
- **Rights** are worth a share (½) of the building's value, plus the end-game point for a tile in a
  slot, minus the column's cost (1 groschen, or permits at today's permit price).
- **A plot** is worth a share (⅓) of the best building in our slots placed there, plus the end-game
  point for an unbuilt plot, minus its cost and half the expected plot surcharge on the tax.
- **A mine** is worth its ore production, its points, and its *stars*: the change in our end-game
  mine-row points if the game ended now, plus a little per star for the rows still being fought over;
  minus the square's wood cost. The Mine action's value is the expected best of the tiles it will draw,
  taken from the unplaced tiles of the tier the stack is at.
- **Income** is worth today's income at the money rate, plus seating a patrician when that pays.
- **St. Barbara** is worth the current tile's benefit, minus the pelican it uses.
- **A patrician** on the council is worth what it pays us in the patrician scorings still to come,
  minus half of what it pays the best opponent.
- **Tax**: pay when the groschen are worth less than the reputation lost.
- **Playing a card** is worth its action's value minus a quarter of the best value of its two halves,
  the price of spending the card for the round; a card played for no effect is worth minus that price.

Ties go to the first listed option, so the bot is deterministic for a given game.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from kutnahora.clients.sdk import ARM_OF, Bot, Choice, GameInfo
from kutnahora.v1 import common_pb2, components_pb2, game_pb2
from kutnahora.v1.game_pb2 import LegalOption, Observation

Square = tuple[int, int]

SIDES: dict[str, tuple[int, int]] = {"north": (-1, 0), "east": (0, 1), "south": (1, 0), "west": (0, -1)}
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
SIDE_ENUM = {
    common_pb2.SIDE_NORTH: "north",
    common_pb2.SIDE_EAST: "east",
    common_pb2.SIDE_SOUTH: "south",
    common_pb2.SIDE_WEST: "west",
}


# Patrician scoring constants are printed on the town hall board; the component set does not carry them.
GREEN_PER_NEIGHBOUR = 1
SILVER_PER_PAIR = 3
YELLOW_POINTS = ((2, 4), (1, 2))
RED_PER_COLUMN = 3
PATRICIAN_SCORINGS = 3  # patricians score at the end of each of the last three rounds


P = ParamSpec("P")
R = TypeVar("R")


def _memoized(method: Callable[P, R]) -> Callable[P, R]:
    """Cache a Position method's answers on the position: one observation asks the same things often."""

    name = method.__name__

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        memo: dict[object, Any] = args[0].memo  # type: ignore[attr-defined]
        key = (name, args[1:], tuple(sorted(kwargs.items()))) if kwargs else (name, args[1:])
        try:
            return memo[key]  # type: ignore[no-any-return]
        except KeyError:
            value = memo[key] = method(*args, **kwargs)
            return value

    return wrapper


@dataclass(frozen=True)
class Weights:
    """The tunable numbers of the heuristic (see the module docstring)."""

    money_early: float = 0.22
    money_late: float = 0.04
    rights_share: float = 0.5
    plot_share: float = 0.33
    card_keep: float = 0.25
    open_dot: float = 0.3
    star_future: float = 0.25
    pelican: float = 1.3
    tax_step: float = 0.3
    patrician_to_pool: float = 0.3
    remove_house: float = 0.5
    plot_threshold_bonus: float = 1.5
    joker_threshold_bonus: float = 0.7


class Tables:
    """Lookups built once from the component set."""

    def __init__(self, components: components_pb2.ComponentSet, players: int) -> None:
        self.components = components
        self.players = players
        self.buildings = {b.id: b for b in components.buildings}
        self.mine_tiles = {
            t.id: t for t in itertools.chain(components.mine_tiles, components.technology_tiles)
        }
        self.cards = {c.number: (c.top, c.bottom) for c in components.action_cards}
        self.guild_commodity: dict[int, int] = {
            b.guild: b.commodity for b in components.buildings if b.guild != common_pb2.GUILD_UNSPECIFIED
        }
        self.rep_points = {r.reputation: r.points for r in components.reputation_points}
        self.rep_min = min(self.rep_points)
        self.rep_max = max(self.rep_points)
        board_name = "small" if players == 2 else "large"
        boards = {b.name: b for b in components.city_boards}
        self.board = boards.get(board_name) or components.city_boards[0]
        self.blocked = {(s.row, s.col) for s in self.board.blocked}
        self.edge_dots = {
            ((d.square.row, d.square.col), SIDE_ENUM.get(d.side, "")) for d in self.board.edge_dots
        }
        self.tier_tiles: dict[int, list[components_pb2.MineTile]] = {}
        for tile in components.mine_tiles:
            self.tier_tiles.setdefault(tile.tier, []).append(tile)
        self.tier_sizes = sorted((tier, len(tiles)) for tier, tiles in self.tier_tiles.items())

        self.squares = frozenset(
            (r, c)
            for r in range(self.board.rows)
            for c in range(self.board.columns)
            if (r, c) not in self.blocked
        )
        self.dot_sides = {
            b.id: frozenset(
                side
                for side, on in zip(
                    SIDES, (b.dots.north, b.dots.east, b.dots.south, b.dots.west), strict=True
                )
                if on
            )
            for b in components.buildings
        }

    def on_board(self, square: Square) -> bool:
        return square in self.squares

    def dots(self, building: int) -> frozenset[str]:
        """The sides of a building tile that show a scoring dot."""
        return self.dot_sides.get(building, frozenset())


@dataclass
class Position:
    """One observation, with the derived facts the heuristic asks for more than once."""

    obs: Observation
    tables: Tables
    weights: Weights
    seat: int
    prices: dict[int, int] = field(init=False)
    no_market: set[int] = field(init=False)
    city: dict[Square, game_pb2.CityTile] = field(init=False)
    plots: dict[Square, int] = field(init=False)

    def __post_init__(self) -> None:
        self.memo: dict[object, Any] = {}
        self.prices = {p.commodity: p.price for p in self.obs.prices}
        self.no_market = {p.commodity for p in self.obs.prices if p.no_market}
        self.city = {(t.square.row, t.square.col): t for t in self.obs.city}
        self.plots = {(p.square.row, p.square.col): p.seat for p in self.obs.plots}
        self.me = self.obs.players[self.seat]
        rounds = max(1, self.obs.rounds)
        elapsed = (max(1, self.obs.round) - 1 + (max(1, self.obs.turn) - 1) / 3) / rounds
        self.left = max(0.0, 1.0 - elapsed)
        w = self.weights
        self.money = w.money_late + (w.money_early - w.money_late) * self.left
        self.future_money = (self.money + w.money_late) / 2
        income_cards = {n for n, halves in self.tables.cards.items() if common_pb2.ACTION_INCOME in halves}
        later_rounds = max(0, self.obs.rounds - max(1, self.obs.round))
        in_hand = bool(income_cards & set(self.me.hand)) and self.obs.phase == game_pb2.PHASE_TURNS
        self.incomes_left = later_rounds + (0.5 if in_hand else 0.0)
        self.scorings_left = sum(
            1
            for r in range(self.obs.rounds - PATRICIAN_SCORINGS + 1, self.obs.rounds + 1)
            if r >= self.obs.round
        )

    # Money, production and reputation.

    def price(self, commodity: int) -> int:
        return self.prices.get(commodity, 0)

    def production_value(self, commodity: int, amount: int = 1) -> float:
        """Points from ``amount`` more production of a commodity."""
        per_unit = self.price(commodity) * (self.incomes_left * self.future_money + 0.1)
        return float(amount * per_unit)

    def my_production(self, commodity: int) -> int:
        total = sum(p.amount for p in self.me.production if p.commodity == commodity)
        if commodity == common_pb2.COMMODITY_ORE:
            total += self.me.mine_ore
        return int(total)

    @_memoized
    def reputation_value(self, delta: int, start: int | None = None) -> float:
        """Points from moving our reputation by ``delta`` (negative: a loss)."""
        t = self.tables
        before = self.me.reputation if start is None else start
        target = before + delta
        beyond = 0
        if target > t.rep_max:
            beyond, target = 2 * (target - t.rep_max), t.rep_max
        elif target < t.rep_min:
            beyond, target = -2 * (t.rep_min - target), t.rep_min
        value = float(t.rep_points.get(target, 0) - t.rep_points.get(before, 0) + beyond)
        w = self.weights
        if len(self.me.plots) < 3 and self.left > 0.2:
            if before < 3 <= target:
                value += w.plot_threshold_bonus * self.left
            elif target < 3 <= before:
                value -= w.plot_threshold_bonus * self.left
        if before < 6 <= target:
            value += w.joker_threshold_bonus * self.left
        elif target < 6 <= before:
            value -= w.joker_threshold_bonus * self.left
        return value

    # The city.

    @_memoized
    def dots_value(self, building: int, square: Square, owner: int | None) -> float:
        """Points our side gains from ``building`` standing on ``square``: matched dots, both ways.

        A dot scores only against a facing dot, so only the tile's own dot sides can match.
        """
        t = self.tables
        value = 0.0
        row, col = square
        for side in t.dots(building):
            dr, dc = SIDES[side]
            other = (row + dr, col + dc)
            if other in t.squares:
                neighbour = self.city.get(other)
                if neighbour is None:
                    value += self.weights.open_dot * self.left
                    continue
                if OPPOSITE[side] not in t.dots(neighbour.building):
                    continue
                if owner == self.seat:
                    value += 1  # our building's dot
                if neighbour.HasField("owner"):
                    value += 1 if neighbour.owner == self.seat else -0.3
            elif owner == self.seat and (square, side) in t.edge_dots:
                value += 1
        return value

    def public_neighbours(self, square: Square) -> int:
        row, col = square
        return sum(
            1
            for dr, dc in SIDES.values()
            if (tile := self.city.get((row + dr, col + dc))) is not None and not tile.HasField("owner")
        )

    def my_building_neighbours(self, square: Square) -> int:
        row, col = square
        return sum(
            1
            for dr, dc in SIDES.values()
            if (tile := self.city.get((row + dr, col + dc))) is not None
            and tile.HasField("owner")
            and tile.owner == self.seat
        )

    def council(self, color: int) -> int:
        return sum(c.count for c in self.obs.council if c.color == color)

    @_memoized
    def plot_squares(self) -> dict[Square, int]:
        """Squares a Plot action may claim now, with our cost in groschen (as the server lists them)."""
        return {(e.square.row, e.square.col): e.groschen for e in self.obs.plot_squares}

    def empty_squares(self) -> list[Square]:
        """Every usable city square without a building or a plot (a free plot may go on any of them)."""
        return sorted(sq for sq in self.tables.squares if sq not in self.city and sq not in self.plots)

    # Buildings.

    @_memoized
    def house_reward_value(self, guild: int) -> float:
        """The reward under the next house of a guild's row."""
        guilds = [int(g) for g in self.me.guilds]
        if guild not in guilds:
            return 0.0
        row = guilds.index(guild)
        removed = self.me.houses_removed[row] if row < len(self.me.houses_removed) else 0
        rows = self.tables.components.house_rewards
        if row >= len(rows) or removed >= len(rows[row].rewards):
            return 0.0
        return self.reward_value(rows[row].rewards[removed])

    def reward_value(self, reward: components_pb2.HouseReward) -> float:
        kind = reward.kind
        if kind == components_pb2.HOUSE_REWARD_KIND_POINTS:
            return float(reward.amount)
        if kind == components_pb2.HOUSE_REWARD_KIND_REPUTATION:
            return self.reputation_value(reward.amount)
        if kind == components_pb2.HOUSE_REWARD_KIND_PELICAN:
            return float(self.weights.pelican * max(1, reward.amount))
        if kind == components_pb2.HOUSE_REWARD_KIND_PUBLIC_BUILDING:
            if len(self.me.slots) >= self.tables.components.building_slots:
                return 0.0
            return 1 + max((self.rights_share_value(top) for top, _ in self.public_tops()), default=0.0)
        return 0.0

    def public_tops(self) -> list[tuple[int, int]]:
        """(building, column) of the top tile of every public stack in the town hall."""
        return [
            (stack.top, col)
            for row in self.obs.town_hall
            for col, stack in enumerate(row.stacks)
            if self.tables.buildings[stack.top].guild == common_pb2.GUILD_UNSPECIFIED
        ]

    @_memoized
    def effects_value(self, building_id: int) -> float:
        """Points from a building's printed effects."""
        building = self.tables.buildings[building_id]
        w = self.weights
        value = 0.0
        for effect in building.effects:
            kind = effect.kind
            if kind == components_pb2.EFFECT_KIND_POINTS:
                value += effect.amount
            elif kind == components_pb2.EFFECT_KIND_REPUTATION:
                value += self.reputation_value(effect.amount)
            elif kind == components_pb2.EFFECT_KIND_PELICANS:
                value += w.pelican * effect.amount
            elif kind == components_pb2.EFFECT_KIND_TAX:
                value -= w.tax_step * effect.amount * self.left
            elif kind == components_pb2.EFFECT_KIND_PATRICIAN:
                value += w.patrician_to_pool
            elif kind == components_pb2.EFFECT_KIND_REMOVE_HOUSE:
                value += w.remove_house
            elif kind == components_pb2.EFFECT_KIND_FLIP_ST_BARBARA:
                value -= w.tax_step * self.barbara_flip_tax() * self.left
            elif kind == components_pb2.EFFECT_KIND_POPULATION_DECK:
                value += 0.1 * effect.amount
            elif kind == components_pb2.EFFECT_KIND_MINING_TECHNOLOGY:
                value += self.technology_value()
            elif kind == components_pb2.EFFECT_KIND_ARM:
                value -= self.arm_loss(building.commodity)
        return value

    def arm_loss(self, commodity: int) -> float:
        """What moving a commodity's arm one notch right costs us through the prices of what we produce.

        Silver and ore share one arm: moving it lowers silver and raises ore.
        """
        arm = ARM_OF.get(commodity, common_pb2.ARM_UNSPECIFIED)
        loss = 0.0
        for other, other_arm in ARM_OF.items():
            held = self.my_production(other) if other_arm == arm else 0
            if held:
                drop = self.price(other) - self.price_at_notch(other, self.arm_notch(other) + 1)
                loss += held * drop * (self.incomes_left * self.future_money + 0.1)
        return loss

    def price_at_notch(self, commodity: int, notch: int) -> int:
        """A commodity's price on its deck's front card at another notch of its arm."""
        components = self.tables.components
        for deck, cards in (
            (common_pb2.DECK_POPULATION, components.population_deck.cards),
            (common_pb2.DECK_ORE, components.ore_deck.cards),
        ):
            position = self.deck_position(deck)
            if not 0 <= position < len(cards):
                continue
            for notch_prices in cards[position].prices:
                if notch_prices.commodity == commodity and notch_prices.prices:
                    return int(notch_prices.prices[max(0, min(notch, len(notch_prices.prices) - 1))])
        return self.price(commodity)

    def deck_position(self, deck: int) -> int:
        return next((d.position for d in self.obs.deck_positions if d.deck == deck), 0)

    def arm_notch(self, commodity: int) -> int:
        arm = ARM_OF.get(commodity, common_pb2.ARM_UNSPECIFIED)
        return next((a.notch for a in self.obs.arms if a.arm == arm), 0)

    def barbara_flip_tax(self) -> int:
        tiles = self.tables.components.barbara_tiles
        current = self.obs.barbara_next
        return next((t.flip_tax for t in tiles if t.number == current), 0)

    @_memoized
    def technology_value(self) -> float:
        """A free mining-technology mine: the next technology tile on the best open square."""
        taken = self.obs.technology_taken
        tech = self.tables.components.technology_tiles
        if taken >= len(tech):
            return 0.0
        tile = tech[taken]
        squares = self.mine_squares()
        if not squares:
            return 0.0
        return float(max(self.mine_value(tile, square, 0) for square in squares) + 0.5 * self.left)

    @_memoized
    def building_value(self, building_id: int, square: Square | None, *, wood: bool = True) -> float:
        """Points from building a tile (on ``square``, or on a typical square when None)."""
        b = self.tables.buildings[building_id]
        public = b.guild == common_pb2.GUILD_UNSPECIFIED
        value = self.effects_value(building_id)
        if not public:
            value += self.production_value(b.commodity, b.production)
            value += self.house_reward_value(b.guild)
        owner = None if public else self.seat
        if square is not None:
            value += self.dots_value(building_id, square, owner)
            if public:
                mine = self.my_building_neighbours(square)
                value += mine * (
                    0.4 * self.left
                    + GREEN_PER_NEIGHBOUR * self.council(common_pb2.COLOR_GREEN) * self.scorings_left
                )
            elif self.council(common_pb2.COLOR_GREEN):
                value += (
                    self.public_neighbours(square)
                    * GREEN_PER_NEIGHBOUR
                    * self.council(common_pb2.COLOR_GREEN)
                    * self.scorings_left
                )
        else:
            dots = len(self.tables.dots(building_id))
            value += 0.35 * dots if not public else 0.1 * dots
        if wood:
            value -= b.wood_cost * self.price(common_pb2.COMMODITY_WOOD) * self.money
        return value

    @_memoized
    def best_square_for(self, building_id: int) -> Square | None:
        squares = [(p.row, p.col) for p in self.me.plots] or list(self.plot_squares())
        if not squares:
            return None
        b_owner = (
            None if self.tables.buildings[building_id].guild == common_pb2.GUILD_UNSPECIFIED else self.seat
        )
        return max(squares, key=lambda sq: self.dots_value(building_id, sq, b_owner))

    @_memoized
    def rights_share_value(self, building_id: int) -> float:
        b = self.tables.buildings[building_id]
        square = self.best_square_for(building_id)
        value = self.building_value(building_id, square)
        if not self.me.plots:
            value -= 3 * self.money  # the plot still to be bought
        if b.commodity in self.no_market:
            value *= 0.5
        return self.weights.rights_share * max(0.0, value)

    def column_cost(self, column: int, *, free: bool = False) -> float:
        """The cost of a town-hall column, in points."""
        if free:
            return 0.0
        costs = self.tables.components.town_hall_costs
        if column >= len(costs):
            return 0.0
        cost = costs[column]
        groschen = cost.amount
        if cost.currency == components_pb2.CURRENCY_PERMITS:
            groschen = cost.amount * self.price(common_pb2.COMMODITY_PERMITS)
        return float(groschen * self.money)

    def rights_tile_value(self, building_id: int, *, free: bool = False, cost: int | None = None) -> float:
        """Taking the rights to a top tile; ``cost`` is its listed price in groschen when known."""
        column = next(
            (
                col
                for row in self.obs.town_hall
                for col, stack in enumerate(row.stacks)
                if stack.top == building_id
            ),
            0,
        )
        b = self.tables.buildings[building_id]
        if b.guild != common_pb2.GUILD_UNSPECIFIED and b.guild not in self.me.guilds:
            return -1.0
        price = self.column_cost(column, free=free) if cost is None else cost * self.money
        return float(1.0 * self.left + self.rights_share_value(building_id) - price)

    def takeable_tiles(self) -> list[int]:
        tiles = []
        for row in self.obs.town_hall:
            for col, stack in enumerate(row.stacks):
                b = self.tables.buildings[stack.top]
                if b.guild != common_pb2.GUILD_UNSPECIFIED and b.guild not in self.me.guilds:
                    continue
                if self.column_cost(col) / max(self.money, 1e-9) <= self.me.groschen:
                    tiles.append(stack.top)
        return tiles

    def plot_value(self, square: Square, cost: float) -> float:
        """Points from claiming ``square`` for ``cost`` groschen."""
        value = 1.0 * self.left - cost * self.money
        slots = list(self.me.slots)
        if len(slots) > len(self.me.plots):
            value += self.weights.plot_share * max(
                (self.building_value(t, square) for t in slots if self.can_build_soon(t)), default=0.0
            )
        held = len(self.me.plots) + 1
        surcharge = 3 if held == 2 else 8 if held >= 3 else 0
        value -= 0.5 * surcharge * self.money
        return float(value)

    def can_build_soon(self, building_id: int) -> bool:
        return self.tables.buildings[building_id].commodity not in self.no_market

    # Mines.

    @_memoized
    def mine_squares(self) -> dict[Square, int]:
        """Squares a new mine may use now, with their price in groschen (as the server lists them)."""
        return {(e.square.row, e.square.col): e.groschen for e in self.obs.mine_squares}

    @_memoized
    def mine_row_points(self, row: int, extra: int) -> float:
        """Our end-game points from one mine row if we add ``extra`` stars to it."""
        area = self.tables.components.mine_area
        total = area.row_stars[row] if row < len(area.row_stars) else 0
        rock_stars = {r.id: r.stars for r in self.tables.components.rock_tiles}
        total += sum(rock_stars.get(r.tile, 0) for r in self.obs.rocks if r.square.row == row)
        by_seat: dict[int, int] = {}
        for m in self.obs.mines:
            if m.square.row == row:
                stars = self.tables.mine_tiles[m.tile].stars
                total += stars
                by_seat[m.owner] = by_seat.get(m.owner, 0) + stars
        total += extra
        by_seat[self.seat] = by_seat.get(self.seat, 0) + extra
        mine = by_seat.get(self.seat, 0)
        if mine <= 0:
            return 0.0
        table = max(
            (s for s in self.tables.components.mine_row_scoring if s.min_stars <= total),
            key=lambda s: s.min_stars,
            default=None,
        )
        if table is None:
            return 0.0
        place = sum(1 for seat, stars in by_seat.items() if seat != self.seat and stars > mine)
        return float(table.points[place]) if place < len(table.points) else 0.0

    def mine_value(self, tile: components_pb2.MineTile, square: Square, groschen: int) -> float:
        """A mine tile on ``square`` for ``groschen`` of wood."""
        row = square[0]
        value = self.production_value(common_pb2.COMMODITY_ORE, tile.ore) + tile.points
        value += 0.05 * tile.population
        if tile.stars:
            value += self.mine_row_points(row, tile.stars) - self.mine_row_points(row, 0)
            value += self.weights.star_future * tile.stars * self.left
        yellow = self.council(common_pb2.COLOR_YELLOW)
        if yellow and self.scorings_left:
            rows = self.tables.components.mine_area.rows
            per_row = [0] * rows
            for m in self.obs.mines:
                if m.owner == self.seat and m.square.row < rows:
                    per_row[m.square.row] += 1
            before = _yellow(per_row)
            per_row[row] += 1
            value += (_yellow(per_row) - before) * yellow * self.scorings_left
        value -= groschen * self.money
        return float(value)

    def best_mine_value(self, tile: components_pb2.MineTile, *, free: bool = False) -> float:
        key = ("best_mine_value", tile.id, free)
        if key not in self.memo:
            squares = self.mine_squares()
            self.memo[key] = (
                max(self.mine_value(tile, sq, 0 if free else cost) for sq, cost in squares.items())
                if squares
                else -math.inf
            )
        return float(self.memo[key])

    @_memoized
    def expected_mine_value(self, *, free: bool = False) -> float:
        """The expected value of a Mine action: the best of the tiles it will draw, or nothing."""
        placed = {m.tile for m in self.obs.mines}
        total = sum(size for _, size in self.tables.tier_sizes)
        drawn = total - self.obs.mine_stack_size
        tier, cumulative = self.tables.tier_sizes[-1][0] if self.tables.tier_sizes else 1, 0
        for t, size in self.tables.tier_sizes:
            cumulative += size
            if drawn < cumulative:
                tier = t
                break
        candidates = [t for t in self.tables.tier_tiles.get(tier, []) if t.id not in placed]
        if not candidates:
            candidates = [t for t in self.tables.components.mine_tiles if t.id not in placed]
        if not candidates:
            return 0.0
        values = sorted((max(0.0, self.best_mine_value(t, free=free)) for t in candidates), reverse=True)
        draws = max(1, self.obs.mine_draws)
        value = _expected_best(values, draws)
        if self.me.miners_pool == 0 and not free:
            value -= self.price(common_pb2.COMMODITY_PERMITS) * self.money
        return value

    # Patricians.

    def patrician_gain(self, color: int, seat: int) -> float:
        """What one more patrician of ``color`` on the council pays ``seat`` per scoring now."""
        player = self.obs.players[seat]
        if color == common_pb2.COLOR_GREEN:
            return float(
                GREEN_PER_NEIGHBOUR
                * sum(
                    self.public_neighbours(sq)
                    for sq, tile in self.city.items()
                    if tile.HasField("owner") and tile.owner == seat
                )
            )
        if color == common_pb2.COLOR_SILVER:
            return float((player.pelicans_used // 2) * SILVER_PER_PAIR)
        if color == common_pb2.COLOR_YELLOW:
            rows = self.tables.components.mine_area.rows
            per_row = [0] * rows
            for m in self.obs.mines:
                if m.owner == seat and m.square.row < rows:
                    per_row[m.square.row] += 1
            return float(_yellow(per_row))
        if color == common_pb2.COLOR_RED:
            houses = self.tables.components.houses_per_row
            removed = list(player.houses_removed)
            columns = sum(1 for col in range(houses) if removed and all(r > col for r in removed))
            return float(columns * RED_PER_COLUMN)
        return 0.0

    @_memoized
    def patrician_value(self, color: int) -> float:
        if not self.scorings_left:
            return 0.0
        mine = self.patrician_gain(color, self.seat)
        others = max(
            (self.patrician_gain(color, p.seat) for p in self.obs.players if p.seat != self.seat), default=0.0
        )
        return (mine - 0.5 * others) * self.scorings_left

    # Actions.

    @_memoized
    def action_value(self, action: int, *, joker: bool = False) -> float:
        """What taking an action now is worth (0 when it could have no effect)."""
        me = self.me
        if action == common_pb2.ACTION_INCOME:
            value = me.income * self.money
            pool = [c.color for c in self.obs.patrician_pool if c.count > 0]
            if pool and me.groschen + me.income >= self.tables.components.patrician_seat_cost:
                cost = self.tables.components.patrician_seat_cost * self.money
                value += max(0.0, max(self.patrician_value(c) for c in pool) - cost)
            return float(value)
        if action == common_pb2.ACTION_RIGHTS:
            if len(me.slots) >= self.tables.components.building_slots:
                return 0.0
            return max((self.rights_tile_value(t) for t in self.takeable_tiles()), default=0.0)
        if action == common_pb2.ACTION_PLOT:
            if len(me.plots) >= self.tables.components.plot_markers:
                return 0.0
            squares = self.plot_squares()
            affordable = [(sq, c) for sq, c in squares.items() if c <= me.groschen]
            return max((self.plot_value(sq, c) for sq, c in affordable), default=0.0)
        if action == common_pb2.ACTION_BUILDING:
            return max(0.0, self.best_build_value())
        if action == common_pb2.ACTION_MINE:
            return max(0.0, self.expected_mine_value())
        if action == common_pb2.ACTION_ST_BARBARA:
            if me.pelicans <= 0:
                return 0.0
            return self.barbara_value()
        if action == common_pb2.ACTION_JOKER:
            cost = 0.0 if me.reputation >= 6 else -self.reputation_value(-1)
            best = max(
                (
                    self.action_value(a, joker=True)
                    for a in (
                        common_pb2.ACTION_RIGHTS,
                        common_pb2.ACTION_INCOME,
                        common_pb2.ACTION_PLOT,
                        common_pb2.ACTION_MINE,
                        common_pb2.ACTION_BUILDING,
                        common_pb2.ACTION_ST_BARBARA,
                    )
                ),
                default=0.0,
            )
            return best - cost
        return 0.0

    @_memoized
    def best_build_value(self, *, wood: bool = True) -> float:
        best = -math.inf
        wood_price = self.price(common_pb2.COMMODITY_WOOD)
        for tile in self.me.slots:
            b = self.tables.buildings[tile]
            if b.guild != common_pb2.GUILD_UNSPECIFIED and b.commodity in self.no_market:
                continue
            if wood and b.wood_cost * wood_price > self.me.groschen:
                continue
            for p in self.me.plots:
                best = max(best, self.building_value(tile, (p.row, p.col), wood=wood))
        return best if best > -math.inf else 0.0

    def barbara_value(self) -> float:
        """The current St. Barbara tile's benefit to us, minus the pelican it uses."""
        me = self.me
        rep = self.reputation_value
        pelican_cost = self.weights.pelican
        if self.council(common_pb2.COLOR_SILVER) and me.pelicans_used % 2 == 1:
            pelican_cost -= SILVER_PER_PAIR * self.council(common_pb2.COLOR_SILVER) * self.scorings_left
        tile = self.obs.barbara_next
        effect = next(
            (t.effect for t in self.tables.components.barbara_tiles if t.number == tile),
            components_pb2.BARBARA_EFFECT_UNSPECIFIED,
        )
        value: float
        if effect == components_pb2.BARBARA_EFFECT_REPUTATION:
            value = rep(2)
        elif effect == components_pb2.BARBARA_EFFECT_FREE_RIGHTS:
            free = [self.rights_tile_value(t, free=True) for t in self.takeable_tiles()]
            slots_free = len(me.slots) < self.tables.components.building_slots
            value = rep(1) + (max(free, default=0.0) if slots_free else 0.0)
        elif effect == components_pb2.BARBARA_EFFECT_HOUSE_FOR_PRODUCTION:
            value = rep(-1) + max(
                (self.production_value(self.tables.guild_commodity.get(g, 0), 2) for g in me.guilds),
                default=0.0,
            )
        elif effect == components_pb2.BARBARA_EFFECT_FREE_PLOT:
            plot = 0.0
            if len(me.plots) < self.tables.components.plot_markers:
                plot = max((self.plot_value(sq, 0) for sq in self.empty_squares()), default=0.0)
            value = rep(1) + plot
        elif effect == components_pb2.BARBARA_EFFECT_DOUBLE_INCOME:
            value = rep(-2) + 2 * me.income * self.money
        elif effect == components_pb2.BARBARA_EFFECT_SEAT_FROM_BANK:
            bank = [c.color for c in self.obs.patrician_bank if c.count > 0]
            value = 2 + max((max(0.0, self.patrician_value(c)) for c in bank), default=0.0)
        elif effect == components_pb2.BARBARA_EFFECT_PUBLIC_NEIGHBOURS:
            gained = sum(
                self.public_neighbours(sq)
                for sq, t in self.city.items()
                if t.HasField("owner") and t.owner == self.seat
            )
            value = rep(gained)
        elif effect == components_pb2.BARBARA_EFFECT_FREE_BUILDING:
            value = 1 + max(0.0, self.best_build_value(wood=False))
        elif effect == components_pb2.BARBARA_EFFECT_DOUBLE_MINE:
            value = 2 * max(0.0, self.expected_mine_value(free=True))
        elif effect == components_pb2.BARBARA_EFFECT_SCORE_BUILDING:
            value = max(
                (
                    self.dots_value(t.building, sq, self.seat)
                    for sq, t in self.city.items()
                    if t.owner == self.seat
                ),
                default=0.0,
            )
        elif effect == components_pb2.BARBARA_EFFECT_FINAL:
            value = 5.0
        else:
            value = rep(2)
        return value - pelican_cost


def _yellow(per_row: Sequence[int]) -> int:
    least = min(per_row) if per_row else 0
    return next((points for need, points in YELLOW_POINTS if least >= need), 0)


def _expected_best(values: Sequence[float], draws: int) -> float:
    """The expected maximum of ``draws`` values drawn without replacement from ``values`` (high first)."""
    n = len(values)
    k = min(draws, n)
    if k <= 0:
        return 0.0
    total = math.comb(n, k)
    return sum(v * math.comb(n - i - 1, k - 1) / total for i, v in enumerate(values))


class GreedyBot(Bot):
    """Scores every listed option with the heuristic of this module and takes the best."""

    name = "greedy"

    def __init__(self, seed: int | None = None, weights: Weights | None = None) -> None:
        self.seed = seed
        self.weights = weights or Weights()
        self.tables: Tables | None = None

    def start(self, game: GameInfo) -> None:
        self.tables = Tables(game.components, game.players)

    def choose(self, observation: Observation) -> Choice:
        if self.tables is None:
            raise RuntimeError("the greedy bot needs the component set: call start() first")
        seat = observation.pending.seat if not observation.HasField("viewer") else observation.viewer
        position = Position(observation, self.tables, self.weights, seat)
        options = list(observation.pending.options)
        scorer = _SCORERS.get(observation.pending.kind)
        if scorer is None or len(options) == 1:
            return options[0]
        scores = [scorer(position, option) for option in options]
        best = max(range(len(options)), key=lambda i: scores[i])
        return options[best]

    def explain(self, observation: Observation) -> list[tuple[float, str]]:
        """Every option's score, best first (for people reading what the bot thinks)."""
        if self.tables is None:
            raise RuntimeError("the greedy bot needs the component set: call start() first")
        position = Position(observation, self.tables, self.weights, observation.pending.seat)
        scorer = _SCORERS.get(observation.pending.kind)
        scored = [(scorer(position, o) if scorer else 0.0, o.text) for o in observation.pending.options]
        return sorted(scored, key=lambda s: -s[0])


# One scoring function per decision kind: (position, option) -> points.

Scorer = Callable[[Position, LegalOption], float]


def _square(option: LegalOption) -> Square:
    s = option.decision.choose_square.square
    return (s.row, s.col)


def _score_play_card(p: Position, option: LegalOption) -> float:
    play = option.decision.play_card
    halves = p.tables.cards.get(play.card, (common_pb2.ACTION_UNSPECIFIED, common_pb2.ACTION_UNSPECIFIED))
    values = {a: p.action_value(a) for a in halves}
    keep = p.weights.card_keep * max(0.0, *values.values())
    if play.no_effect:
        return -keep
    return values.get(play.action, p.action_value(play.action)) - keep


def _score_joker(p: Position, option: LegalOption) -> float:
    return p.action_value(option.decision.choose_action.action, joker=True)


def _score_guild_set(p: Position, option: LegalOption) -> float:
    cards = p.tables.components.guild_setup_cards
    card = next((c for c in cards if c.id == p.obs.guild_setup_card), None)
    if card is None:
        return 0.0
    row = next((r for r in card.rows if r.players == len(p.obs.players)), None)
    index = option.decision.choose_guild_set.index
    if row is None or index >= len(row.sets):
        return 0.0
    guilds = row.sets[index].guilds
    return _guilds_value(p, guilds)


def _guilds_value(p: Position, guilds: Iterable[int]) -> float:
    value = 0.0
    for guild in guilds:
        commodity = p.tables.guild_commodity.get(guild, 0)
        value += p.price(commodity)
        cheap = [
            p.tables.buildings[s.top]
            for row in p.obs.town_hall
            for col, s in enumerate(row.stacks)
            if s.guild == guild and col < 2
        ]
        value += 0.5 * sum(b.production for b in cheap)
    return value


def _score_guild_rows(p: Position, option: LegalOption) -> float:
    guilds = list(option.decision.arrange_guilds.guilds)
    rows = p.tables.components.house_rewards
    value = 0.0
    for row, guild in enumerate(guilds):
        if row >= len(rows):
            break
        weight = p.price(p.tables.guild_commodity.get(guild, 0))
        rewards = rows[row].rewards
        early = sum(p.reward_value(r) * f for r, f in zip(rewards, (1.0, 0.7, 0.4, 0.2), strict=False))
        value += weight * early
    return value


def _score_refill(p: Position, option: LegalOption) -> float:
    if not option.decision.confirm.yes:
        return 0.0
    wants_more = p.me.groschen > 30 and p.left > 0.3
    return float((1.0 if wants_more else -1.0) - option.cost.groschen * p.money)


def _score_mine_tile(p: Position, option: LegalOption) -> float:
    if option.decision.WhichOneof("choice") == "skip":
        return 0.0
    tile = p.tables.mine_tiles[option.decision.choose_tile.tile]
    return p.best_mine_value(tile)


def _score_mine_square(p: Position, option: LegalOption) -> float:
    square = _square(option)
    tile_id = p.obs.kept_tile if p.obs.HasField("kept_tile") else None
    cost = option.cost.groschen
    if tile_id is None or tile_id not in p.tables.mine_tiles:
        return -cost * p.money
    return p.mine_value(p.tables.mine_tiles[tile_id], square, cost)


def _score_tech_square(p: Position, option: LegalOption) -> float:
    if option.decision.WhichOneof("choice") == "skip":
        return -0.5
    square = _square(option)
    tile_id = p.obs.kept_tile if p.obs.HasField("kept_tile") else None
    if tile_id is None or tile_id not in p.tables.mine_tiles:
        return 0.0
    return p.mine_value(p.tables.mine_tiles[tile_id], square, 0)


def _score_rights_tile(p: Position, option: LegalOption) -> float:
    return p.rights_tile_value(option.decision.choose_tile.tile, cost=option.cost.groschen)


def _score_plot_square(p: Position, option: LegalOption) -> float:
    return p.plot_value(_square(option), option.cost.groschen)


def _score_build_tile(p: Position, option: LegalOption) -> float:
    tile = option.decision.choose_tile.tile
    squares = [(q.row, q.col) for q in p.me.plots]
    value = max(
        (p.building_value(tile, sq, wood=False) for sq in squares),
        default=p.building_value(tile, None, wood=False),
    )
    return value - option.cost.groschen * p.money


def _score_build_square(p: Position, option: LegalOption) -> float:
    tile = p.obs.building_in_hand if p.obs.HasField("building_in_hand") else None
    if tile is None:
        return 0.0
    return p.building_value(tile, _square(option), wood=False) - option.cost.groschen * p.money


def _score_remove_house(p: Position, option: LegalOption) -> float:
    guild = option.decision.choose_guild.guild
    # The skipped reward is lost; prefer the row whose next reward is worth least.
    return -p.house_reward_value(guild)


def _score_barbara_house(p: Position, option: LegalOption) -> float:
    guild = option.decision.choose_guild.guild
    return p.production_value(p.tables.guild_commodity.get(guild, 0), 2) - p.house_reward_value(guild)


def _score_public_reward(p: Position, option: LegalOption) -> float:
    if option.decision.WhichOneof("choice") == "skip":
        return 0.0
    return p.rights_tile_value(option.decision.choose_tile.tile, free=True)


def _score_seat_patrician(p: Position, option: LegalOption) -> float:
    if option.decision.WhichOneof("choice") == "skip":
        return 0.0
    return float(p.patrician_value(option.decision.choose_patrician.color) - option.cost.groschen * p.money)


def _score_barbara_patrician(p: Position, option: LegalOption) -> float:
    if option.decision.WhichOneof("choice") == "skip":
        return 0.0
    return p.patrician_value(option.decision.choose_patrician.color)


def _score_tax(p: Position, option: LegalOption) -> float:
    cost = option.cost
    if option.decision.confirm.yes:
        return float(-cost.groschen * p.money)
    return p.reputation_value(-cost.reputation) - cost.points


def _score_score_building(p: Position, option: LegalOption) -> float:
    if option.decision.WhichOneof("choice") == "skip":
        return 0.0
    tile = option.decision.choose_tile.tile
    square = next((sq for sq, t in p.city.items() if t.building == tile), None)
    if square is None:
        return 0.0
    return p.dots_value(tile, square, p.seat)


_SCORERS: dict[int, Scorer] = {
    game_pb2.DECISION_KIND_GUILD_SET: _score_guild_set,
    game_pb2.DECISION_KIND_GUILD_ROWS: _score_guild_rows,
    game_pb2.DECISION_KIND_PLAY_CARD: _score_play_card,
    game_pb2.DECISION_KIND_JOKER_ACTION: _score_joker,
    game_pb2.DECISION_KIND_REFILL_MINERS: _score_refill,
    game_pb2.DECISION_KIND_MINE_TILE: _score_mine_tile,
    game_pb2.DECISION_KIND_MINE_SQUARE: _score_mine_square,
    game_pb2.DECISION_KIND_TECH_SQUARE: _score_tech_square,
    game_pb2.DECISION_KIND_RIGHTS_TILE: _score_rights_tile,
    game_pb2.DECISION_KIND_PLOT_SQUARE: _score_plot_square,
    game_pb2.DECISION_KIND_BUILD_TILE: _score_build_tile,
    game_pb2.DECISION_KIND_BUILD_SQUARE: _score_build_square,
    game_pb2.DECISION_KIND_REMOVE_HOUSE: _score_remove_house,
    game_pb2.DECISION_KIND_PUBLIC_REWARD: _score_public_reward,
    game_pb2.DECISION_KIND_SEAT_PATRICIAN: _score_seat_patrician,
    game_pb2.DECISION_KIND_TAX: _score_tax,
    game_pb2.DECISION_KIND_BARBARA_HOUSE: _score_barbara_house,
    game_pb2.DECISION_KIND_BARBARA_PATRICIAN: _score_barbara_patrician,
    game_pb2.DECISION_KIND_SCORE_BUILDING: _score_score_building,
}
