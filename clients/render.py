"""Drawing a Kutná Hora game in the terminal with rich: the whole visible game, options, events, results.

Every function here turns wire messages (``kutnahora.v1``) plus the component set into rich renderables;
nothing talks to the server and nothing knows the rules beyond what the messages and components say.
:mod:`kutnahora.clients.human` decides when to draw what.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rich import box
from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from kutnahora.clients.sdk import ARM_OF
from kutnahora.v1 import common_pb2, components_pb2, game_pb2
from kutnahora.v1.game_pb2 import LegalOption, Observation

SEAT_STYLES = ("bold red", "bold blue", "bold green", "bold magenta")
COMMODITY_ORDER = (
    common_pb2.COMMODITY_WOOD,
    common_pb2.COMMODITY_FOOD,
    common_pb2.COMMODITY_BEER,
    common_pb2.COMMODITY_SILVER,
    common_pb2.COMMODITY_ORE,
    common_pb2.COMMODITY_PERMITS,
)
BARBARA_TEXT = {
    components_pb2.BARBARA_EFFECT_REPUTATION: "gain 2 reputation",
    components_pb2.BARBARA_EFFECT_FREE_RIGHTS: "+1 reputation, a free Rights action",
    components_pb2.BARBARA_EFFECT_HOUSE_FOR_PRODUCTION: "-1 reputation, remove a house for +2 production",
    components_pb2.BARBARA_EFFECT_FREE_PLOT: "+1 reputation, a free Plot on any square",
    components_pb2.BARBARA_EFFECT_DOUBLE_INCOME: "-2 reputation, two Income actions",
    components_pb2.BARBARA_EFFECT_SEAT_FROM_BANK: "2 points, seat a patrician from the bank",
    components_pb2.BARBARA_EFFECT_PUBLIC_NEIGHBOURS: "reputation per public building beside yours",
    components_pb2.BARBARA_EFFECT_FREE_BUILDING: "1 point, a Building action without wood",
    components_pb2.BARBARA_EFFECT_DOUBLE_MINE: "two Mine actions without wood",
    components_pb2.BARBARA_EFFECT_SCORE_BUILDING: "score one of your buildings' dots",
    components_pb2.BARBARA_EFFECT_FINAL: "5 points; later St. Barbara actions give 2 reputation",
}


def label(enum: object, value: int) -> str:
    """An enum value in words: ``GUILD_MINERS`` is ``Miners``, ``ACTION_ST_BARBARA`` ``St. Barbara``."""
    try:
        name: str = enum.Name(value)  # type: ignore[attr-defined]
    except ValueError:
        return str(value)
    words = name.split("_")
    prefix = {"GUILD": 1, "COMMODITY": 1, "ACTION": 1, "COLOR": 1, "PHASE": 1, "DECK": 1, "ARM": 1}
    skip = prefix.get(words[0], 0)
    if words[0] == "DECISION" or words[0] == "GAME":
        skip = 2
    text = " ".join(w.capitalize() for w in words[skip:])
    return text.replace("St Barbara", "St. Barbara")


class Names:
    """How seats, buildings and tiles are called on screen."""

    def __init__(
        self,
        components: components_pb2.ComponentSet,
        seat_names: Sequence[str] = (),
        viewer: int | None = None,
    ) -> None:
        self.components = components
        self.seat_names = list(seat_names)
        self.viewer = viewer
        self.buildings = {b.id: b for b in components.buildings}
        self.mine_tiles = {t.id: t for t in (*components.mine_tiles, *components.technology_tiles)}
        self.cards = {c.number: (c.top, c.bottom) for c in components.action_cards}
        self.guild_sets: list[tuple[int, ...]] = []

    def set_game(self, obs: Observation) -> None:
        """Learn the game's guild sets (its guild setup card and player count), to name them."""
        card = next((c for c in self.components.guild_setup_cards if c.id == obs.guild_setup_card), None)
        row = next((r for r in card.rows if r.players == len(obs.players)), None) if card else None
        self.guild_sets = [tuple(s.guilds) for s in row.sets] if row else []

    def seat(self, seat: int) -> Text:
        """``Seat 2 (greedy)``, coloured by seat, or ``You`` for the viewer."""
        name = self.seat_names[seat] if seat < len(self.seat_names) and self.seat_names[seat] else ""
        if seat == self.viewer:
            words = f"You (seat {seat})"
        else:
            words = f"Seat {seat}" + (f" ({name})" if name else "")
        return Text(words, style=SEAT_STYLES[seat % len(SEAT_STYLES)])

    def short_seat(self, seat: int) -> Text:
        """``P2``, coloured by seat."""
        return Text(f"P{seat}", style=SEAT_STYLES[seat % len(SEAT_STYLES)])

    def seat_cell(self, seat: int) -> Text:
        """``P2 greedy`` or ``P1 you``, for narrow table cells."""
        name = self.seat_names[seat] if seat < len(self.seat_names) else ""
        return Text(f"P{seat} {'you' if seat == self.viewer else name}".strip(), style=SEAT_STYLES[seat % 4])

    def building(self, building: int) -> str:
        b = self.buildings.get(building)
        return b.name if b else f"building {building}"

    def building_kind(self, building: int) -> str:
        b = self.buildings.get(building)
        if b is None:
            return "?"
        if b.guild:
            return label(common_pb2.Guild, b.guild)
        return f"{label(common_pb2.Color, b.color)} public"

    def building_line(self, building: int) -> str:
        """Name, owner kind, costs, production and dots of a building, in one line."""
        b = self.buildings.get(building)
        if b is None:
            return f"building {building}"
        sides = (b.dots.north, b.dots.east, b.dots.south, b.dots.west)
        dots = "".join(s for s, on in zip("NESW", sides, strict=True) if on)
        production = (
            f", +{b.production} {label(common_pb2.Commodity, b.commodity).lower()}" if b.production else ""
        )
        return (
            f"{b.name} ({self.building_kind(building)}{production}; wood {b.wood_cost}, "
            f"plot {b.plot_cost}, dots {dots or '-'})"
        )

    def mine_tile(self, tile: int) -> str:
        t = self.mine_tiles.get(tile)
        if t is None:
            return f"tile {tile}"
        return f"{t.stars}★ ore {t.ore} population +{t.population} points {t.points} wood {t.wood_cost}"


SKIP_TEXTS: dict[int, str] = {
    game_pb2.DECISION_KIND_MINE_TILE: "Discard them all",
    game_pb2.DECISION_KIND_TECH_SQUARE: "Remove the tile from the game",
    game_pb2.DECISION_KIND_RIGHTS_TILE: "Take no building",
    game_pb2.DECISION_KIND_PLOT_SQUARE: "Claim no plot",
    game_pb2.DECISION_KIND_BUILD_TILE: "Build nothing",
    game_pb2.DECISION_KIND_REMOVE_HOUSE: "Remove no house",
    game_pb2.DECISION_KIND_PUBLIC_REWARD: "Take no public building",
    game_pb2.DECISION_KIND_SEAT_PATRICIAN: "Seat no patrician",
    game_pb2.DECISION_KIND_BARBARA_HOUSE: "Remove no house",
    game_pb2.DECISION_KIND_BARBARA_PATRICIAN: "Seat no patrician",
    game_pb2.DECISION_KIND_SCORE_BUILDING: "Score no building",
}


def describe_option(option: LegalOption, kind: int, names: Names) -> str:
    """A readable description: the server's when it sent one, else one built from the payload."""
    if option.description:
        return option.description
    return describe_decision(option.decision, kind, names) or option.text


def _plural(amount: int, noun: str) -> str:
    return f"{amount} {noun}" if amount == 1 else f"{amount} {noun}s"


def cost_text(cost: game_pb2.OptionCost) -> str:
    """An option's cost in words, worded as the engine's ``describe_cost``: ``12 groschen (4 wood)``."""
    parts: list[str] = []
    if cost.groschen:
        bought = [_plural(cost.permits, "permit")] if cost.permits else []
        bought += [f"{cost.wood} wood"] if cost.wood else []
        parts.append(f"{cost.groschen} groschen" + (f" ({', '.join(bought)})" if bought else ""))
    if cost.reputation:
        parts.append(f"{cost.reputation} reputation")
    if cost.points:
        parts.append(_plural(cost.points, "point"))
    if cost.pelicans:
        parts.append(_plural(cost.pelicans, "pelican"))
    return ", ".join(parts) or "free"


def describe_decision(decision: game_pb2.Decision, kind: int, names: Names) -> str:
    """A decision payload in words, using the component set for names.

    It words an option exactly as the engine's ``describe_option`` does (the server sends that wording
    with each option; this one serves where only the payload is known, such as the log of moves).
    """
    which = decision.WhichOneof("choice")
    if which == "play_card":
        play = decision.play_card
        if play.no_effect:
            return f"Play card {play.card} for no effect"
        return f"Play card {play.card}: {label(common_pb2.Action, play.action)}"
    if which == "choose_action":
        return f"Joker as {label(common_pb2.Action, decision.choose_action.action)}"
    if which == "choose_guild_set":
        index = decision.choose_guild_set.index
        if index < len(names.guild_sets):
            return "Guilds " + ", ".join(label(common_pb2.Guild, g) for g in names.guild_sets[index])
        return f"Guild set {index}"
    if which == "arrange_guilds":
        return "Rows: " + " / ".join(label(common_pb2.Guild, g) for g in decision.arrange_guilds.guilds)
    if which == "choose_tile":
        tile = decision.choose_tile.tile
        if kind == game_pb2.DECISION_KIND_MINE_TILE:
            return f"Mine tile {tile}: {names.mine_tile(tile)}"
        return names.building_line(tile)
    if which == "choose_square":
        s = decision.choose_square.square
        where = (
            "Mine square"
            if kind in (game_pb2.DECISION_KIND_MINE_SQUARE, game_pb2.DECISION_KIND_TECH_SQUARE)
            else "Square"
        )
        return f"{where} row {s.row}, column {s.col}"
    if which == "choose_guild":
        return f"The {label(common_pb2.Guild, decision.choose_guild.guild)} row"
    if which == "choose_patrician":
        return f"A {label(common_pb2.Color, decision.choose_patrician.color).lower()} patrician"
    if which == "confirm":
        yes = decision.confirm.yes
        if kind == game_pb2.DECISION_KIND_TAX:
            return "Pay the tax" if yes else "Lose reputation instead"
        if kind == game_pb2.DECISION_KIND_REFILL_MINERS:
            return "Buy a permit to refill the miner pool" if yes else "Do not refill the miner pool"
        return "Yes" if yes else "No"
    if which == "skip":
        return SKIP_TEXTS.get(kind, "Skip")
    return ""


def _counts(entries: Sequence[game_pb2.PatricianCount]) -> str:
    parts = [f"{label(common_pb2.Color, e.color).lower()} {e.count}" for e in entries if e.count]
    return ", ".join(parts) or "none"


def header(obs: Observation, names: Names, status: str = "") -> Text:
    """One line: game, round, turn, phase, tax and whose turn it is."""
    text = Text()
    text.append(f"Game {obs.game_id}", style="bold")
    text.append(f"  ·  Round {obs.round}/{obs.rounds}  ·  Turn {obs.turn}")
    if obs.phase == game_pb2.PHASE_TURNS:
        text.append(f" ({obs.cards_left_in_turn} card{'s' if obs.cards_left_in_turn != 1 else ''} left)")
    text.append(f"  ·  {label(game_pb2.Phase, obs.phase)}  ·  Tax {obs.tax}")
    text.append("  ·  Start: ")
    text.append_text(names.short_seat(obs.start_seat))
    if status:
        text.append(f"  ·  {status}")
    if obs.over:
        text.append("  ·  ")
        text.append("Game over", style="bold yellow")
    elif obs.HasField("pending"):
        text.append("\nTo play: ")
        text.append_text(names.seat(obs.pending.seat))
        question = obs.pending.question or label(game_pb2.DecisionKind, obs.pending.kind)
        text.append(f" — {question}")
    return text


def market(obs: Observation) -> Table:
    """Both card stands: each commodity's price, arm notch and market."""
    table = Table(title="Prices", box=box.SIMPLE_HEAD, padding=(0, 1), title_style="bold")
    table.add_column("Commodity")
    table.add_column("Price", justify="right")
    table.add_column("Arm", justify="right")
    prices = {p.commodity: p for p in obs.prices}
    arms: dict[int, int] = {a.arm: a.notch for a in obs.arms}
    for commodity in COMMODITY_ORDER:
        entry = prices.get(commodity)
        if entry is None:
            continue
        price = Text(str(entry.price))
        if entry.no_market:
            price.append(" ✗", style="bold red")
        table.add_row(label(common_pb2.Commodity, commodity), price, str(arms.get(ARM_OF[commodity], 0)))
    short = {common_pb2.DECK_POPULATION: "population", common_pb2.DECK_ORE: "ore"}
    decks = "\n".join(f"{short.get(d.deck, '?')} price card {d.position}" for d in obs.deck_positions)
    table.caption = f"{decks}\nArm: its notch · ✗ no market"
    return table


def town_hall(obs: Observation, names: Names) -> Table:
    """The town hall: the visible top tile of every stack, its stack size and the column's cost."""
    table = Table(title="Town hall", box=box.SIMPLE_HEAD, padding=(0, 1), title_style="bold")
    costs = list(names.components.town_hall_costs)
    columns = max((len(r.stacks) for r in obs.town_hall), default=0)
    for col in range(max(columns, 1)):
        cost = costs[col] if col < len(costs) else None
        if cost is None:
            heading = f"Column {col}"
        elif cost.currency == components_pb2.CURRENCY_GROSCHEN:
            heading = f"{cost.amount} groschen"
        else:
            heading = f"{cost.amount} permit{'s' if cost.amount != 1 else ''}"
        table.add_column(heading)
    for row in obs.town_hall:
        cells: list[RenderableType] = []
        for stack in row.stacks:
            cell = Text(names.building(stack.top), style="bold")
            cell.append(f"\n{names.building_kind(stack.top)} · {stack.size} left")
            cells.append(cell)
        cells += [""] * (columns - len(row.stacks))
        table.add_row(*cells)
    table.caption = f"red buildings still to come: {obs.red_stack_size}"
    return table


def city(obs: Observation, names: Names) -> Table:
    """The Kutná Hora board: buildings with their owners, claimed plots, blocked squares."""
    players = len(obs.players)
    board = next(
        (b for b in names.components.city_boards if b.name == ("small" if players == 2 else "large")),
        names.components.city_boards[0] if names.components.city_boards else None,
    )
    rows, cols = (board.rows, board.columns) if board else (6, 6)
    blocked = {(s.row, s.col) for s in board.blocked} if board else set()
    tiles = {(t.square.row, t.square.col): t for t in obs.city}
    plots = {(p.square.row, p.square.col): p.seat for p in obs.plots}
    table = Table(title="Kutná Hora", box=box.SQUARE, show_lines=True, padding=(0, 0), title_style="bold")
    table.add_column("", justify="right", style="dim")
    for c in range(cols):
        table.add_column(str(c), justify="center", min_width=9, max_width=11)
    for r in range(rows):
        cells: list[RenderableType] = [str(r)]
        for c in range(cols):
            square = (r, c)
            if square in blocked:
                cells.append(Text("░░░", style="dim"))
            elif square in tiles:
                tile = tiles[square]
                # The whole name: the column wraps it onto two lines rather than cutting it.
                cell = Text(names.building(tile.building), overflow="fold")
                cell.append("\n")
                if tile.HasField("owner"):
                    cell.append_text(names.short_seat(tile.owner))
                else:
                    cell.append("public", style="italic")
                cells.append(cell)
            elif square in plots:
                cell = Text("plot ")
                cell.append_text(names.short_seat(plots[square]))
                cells.append(cell)
            else:
                cells.append(Text("·", style="dim"))
        table.add_row(*cells)
    return table


def mines(obs: Observation, names: Names) -> Table:
    """The mines: tiles with their stars and miners, rocks, entrances."""
    area = names.components.mine_area
    rows, cols = (area.rows, area.columns) if area.rows else (4, 7)
    placed = {(m.square.row, m.square.col): m for m in obs.mines}
    rocks = {(r.square.row, r.square.col): r for r in obs.rocks}
    rock_stars = {r.id: r.stars for r in names.components.rock_tiles}
    entrances = {(s.row, s.col) for s in area.entrances}
    table = Table(title="Mines", box=box.SQUARE, show_lines=True, padding=(0, 0), title_style="bold")
    table.add_column("row", justify="right", style="dim")
    for c in range(cols):
        table.add_column(str(c), justify="center", min_width=6)
    for r in range(rows):
        printed = area.row_stars[r] if r < len(area.row_stars) else 0
        cells: list[RenderableType] = [f"{r}, {printed}★"]
        for c in range(cols):
            square = (r, c)
            if square in placed:
                m = placed[square]
                tile = names.mine_tiles.get(m.tile)
                cell = Text(f"{tile.stars if tile else '?'}★ ")
                cell.append_text(names.short_seat(m.owner))
                cells.append(cell)
            elif square in rocks:
                cells.append(Text(f"rock {rock_stars.get(rocks[square].tile, 0)}★", style="dim"))
            elif square in entrances:
                cells.append(Text("entry", style="cyan"))
            else:
                cells.append(Text("·", style="dim"))
        table.add_row(*cells)
    table.caption = (
        f"row, ★ a tile there scores · tiles in the stack {obs.mine_stack_size}\n"
        f"discarded {obs.mine_discard_size} · drawn per Mine {obs.mine_draws} · "
        f"technology taken {obs.technology_taken}"
    )
    return table


def church_and_council(obs: Observation, names: Names) -> Panel:
    """St. Barbara's current tile, the patricians, the event cards."""
    text = Text()
    tile = next((t for t in names.components.barbara_tiles if t.number == obs.barbara_next), None)
    if tile is None:
        text.append("St. Barbara: every tile flipped (an action gives 2 reputation)\n")
    else:
        text.append(f"St. Barbara tile {tile.number}: ", style="bold")
        text.append(f"{BARBARA_TEXT.get(tile.effect, '?')} (flip tax {tile.flip_tax})\n")
    text.append("Patricians — bank: ", style="bold")
    text.append(_counts(obs.patrician_bank))
    text.append("; pool: ")
    text.append(_counts(obs.patrician_pool))
    text.append("; council: ")
    text.append(_counts(obs.council))
    if obs.HasField("current_event"):
        event = next((e for e in names.components.event_cards if e.id == obs.current_event), None)
        if event is not None:
            text.append(
                f"\nEvent: {event.name} (tax +{event.tax}, population +{event.population}, ore +{event.ore})"
            )
    if obs.HasField("building_in_hand"):
        text.append(f"\nBuilding in hand: {names.building_line(obs.building_in_hand)}")
    if obs.drawn:
        text.append("\nYou drew: " + "; ".join(f"tile {t} ({names.mine_tile(t)})" for t in obs.drawn))
    if obs.HasField("kept_tile"):
        text.append(f"\nPlacing tile {obs.kept_tile}: {names.mine_tile(obs.kept_tile)}")
    return Panel(text, title="St. Barbara and the council", title_align="left", box=box.ROUNDED)


def players(obs: Observation, names: Names) -> Table:
    """Every player's board side by side: money, reputation, points, production, houses, pieces, hand."""
    table = Table(title="Players", box=box.SIMPLE_HEAD, padding=(0, 1), title_style="bold")
    table.add_column("", style="dim", no_wrap=True)
    for p in obs.players:
        table.add_column(names.seat_cell(p.seat), min_width=12)

    def row(heading: str, cell: Callable[[game_pb2.PlayerBoard], str]) -> None:
        table.add_row(heading, *(cell(p) for p in obs.players))

    def production(p: game_pb2.PlayerBoard) -> str:
        parts = [
            f"{label(common_pb2.Commodity, c.commodity).lower()} {c.amount}" for c in p.production if c.amount
        ]
        if p.mine_ore:
            parts.append(f"mine ore {p.mine_ore}")
        return "\n".join(parts) or "-"

    def houses(p: game_pb2.PlayerBoard) -> str:
        if not p.guilds:
            chosen = ", ".join(label(common_pb2.Guild, g) for g in p.guild_set)
            return f"{chosen}\n(rows not placed yet)" if chosen else "no guilds chosen yet"
        removed = list(p.houses_removed)
        return "\n".join(
            f"{label(common_pb2.Guild, g)}: {removed[i] if i < len(removed) else 0} removed"
            for i, g in enumerate(p.guilds)
        )

    row("Points", lambda p: str(p.points))
    row("Groschen", lambda p: str(p.groschen))
    row("Reputation", lambda p: str(p.reputation))
    row("Income", lambda p: str(p.income))
    row("Tax due", lambda p: str(p.tax_due))
    row("Production", production)
    row("Guild rows", houses)
    row("Slots", lambda p: "\n".join(names.building(b) for b in p.slots) or "-")
    row("Plots", lambda p: " ".join(f"{s.row},{s.col}" for s in p.plots) or "-")
    row("Buildings", lambda p: str(len(p.buildings)))
    row("Pelicans", lambda p: f"{p.pelicans} unused, {p.pelicans_used} used")
    row("Miners", lambda p: f"{p.miners_pool} in pool, {p.miners_reserve} left")
    row("Hand", lambda p: " ".join(str(c) for c in p.hand) or "-")
    return table


def cards_legend(names: Names) -> Text:
    """The six action cards and their halves, for reading hands and options."""
    parts = [
        f"{n}: {label(common_pb2.Action, top)}/{label(common_pb2.Action, bottom)}"
        for n, (top, bottom) in sorted(names.cards.items())
    ]
    return Text("Cards — " + " · ".join(parts), style="dim")


def game_screen(obs: Observation, names: Names, status: str = "") -> Group:
    """The whole visible game, top to bottom."""
    return Group(
        Panel(header(obs, names, status), box=box.HEAVY),
        Columns([market(obs), town_hall(obs, names)], padding=(0, 2)),
        Columns([city(obs, names), mines(obs, names)], padding=(0, 2)),
        church_and_council(obs, names),
        players(obs, names),
        cards_legend(names),
    )


def options_table(obs: Observation, names: Names) -> Table:
    """The listed options, numbered from 1 for people, with their readable descriptions."""
    table = Table(box=box.SIMPLE, padding=(0, 1), show_header=True, title_style="bold")
    table.title = obs.pending.question or label(game_pb2.DecisionKind, obs.pending.kind)
    table.add_column("#", justify="right", style="bold cyan")
    table.add_column("Option")
    table.add_column("Cost", style="yellow")
    table.add_column("Short form", style="dim")
    for number, option in enumerate(obs.pending.options, start=1):
        cost = cost_text(option.cost)
        table.add_row(
            str(number),
            describe_option(option, obs.pending.kind, names),
            "" if cost == "free" else cost,
            option.text,
        )
    return table


def status_line(obs: Observation, names: Names) -> Text:
    """The header in two short lines, printed just above the question so it stays on a small screen."""
    text = Text()
    text.append(f"Round {obs.round}/{obs.rounds} · Turn {obs.turn}", style="bold")
    if obs.phase == game_pb2.PHASE_TURNS:
        text.append(f" ({obs.cards_left_in_turn} card{'s' if obs.cards_left_in_turn != 1 else ''} left)")
    text.append(f" · Tax {obs.tax}")
    if obs.HasField("viewer") and obs.viewer < len(obs.players):
        me = obs.players[obs.viewer]
        text.append(f" · {me.groschen} groschen, reputation {me.reputation}")
    if obs.HasField("pending") and not obs.over:
        text.append("\nTo play: ")
        text.append_text(names.seat(obs.pending.seat))
        question = obs.pending.question or label(game_pb2.DecisionKind, obs.pending.kind)
        text.append(f" — {question}")
    return text


def unavailable_note(obs: Observation, names: Names) -> Text | None:
    """Why card halves in the hand are not offered with effect, one line each; None when all are."""
    missing = obs.pending.unavailable
    if not missing:
        return None
    text = Text("Not offered: ", style="dim")
    text.append(
        "; ".join(f"card {m.card} {label(common_pb2.Action, m.action)} ({m.reason})" for m in missing),
        style="dim",
    )
    return text


def move_line(
    message: game_pb2.DecisionRecord,
    events: Sequence[game_pb2.Event],
    names: Names,
    kind: int = game_pb2.DECISION_KIND_UNSPECIFIED,
) -> Text:
    """One applied decision and what it caused, as a line for the log.

    ``kind`` is the kind of decision it answered (the previous observation's pending kind); without it,
    a chosen tile or square is shown by its short text, since it could be a building or a mine tile.
    """
    text = Text()
    text.append_text(names.seat(message.seat))
    text.append(": ")
    ambiguous = message.decision.WhichOneof("choice") in ("choose_tile", "choose_square")
    if kind == game_pb2.DECISION_KIND_UNSPECIFIED and ambiguous:
        words = message.text
    else:
        words = describe_decision(message.decision, kind, names) or message.text
    text.append(words, style="bold")
    if message.source == game_pb2.DECISION_SOURCE_TIMEOUT:
        text.append(" (clock ran out)", style="yellow")
    elif message.source == game_pb2.DECISION_SOURCE_POLICY:
        text.append(" (played by the server)", style="yellow")
    for event in events:
        text.append("\n    ")
        text.append_text(event_line(event, names))
    return text


IRREGULAR_VERBS = {"has": "have", "does": "do", "is": "are"}


def _second_person(verb: str) -> str:
    """``moves`` is ``move``: the engine's sentences speak of a seat; the viewer is addressed as you."""
    if verb in IRREGULAR_VERBS:
        return IRREGULAR_VERBS[verb]
    return verb[:-1] if verb.endswith("s") else verb


ARM_WORDS = {"silver_ore": "silver and ore"}
"""The price arms the engine's sentences name by their internal names."""


def readable(words: str) -> str:
    """An engine sentence with internal names in words: ``the silver_ore arm`` is ``the silver and ore
    arm``."""
    return re.sub(r"\b(\w+_\w+) arm\b", lambda m: f"{ARM_WORDS.get(m[1], m[1].replace('_', ' '))} arm", words)


def event_line(event: game_pb2.Event, names: Names) -> Text:
    """An event's sentence, its seat named as the headings name it (``You (seat 0)``, ``Seat 1 (greedy)``)."""
    words = readable(event.text)
    line = Text(style="dim")
    prefix = f"seat {event.seat} "
    if event.HasField("seat") and words.startswith(prefix):
        rest = words[len(prefix) :]
        if event.seat == names.viewer:
            verb, _, tail = rest.partition(" ")
            rest = f"{_second_person(verb)} {tail}".replace(" its guilds", " your guilds")
        line.append_text(names.seat(event.seat))
        line.append(" " + rest)
        return line
    line.append(words[:1].upper() + words[1:])
    return line


def result_table(result: game_pb2.GameResult, names: Names) -> Table:
    """The final scores, with each seat's breakdown and the winners."""
    table = Table(title="Final result", box=box.SIMPLE_HEAD, title_style="bold")
    table.add_column("Seat")
    table.add_column("Score", justify="right")
    table.add_column("Groschen", justify="right")
    table.add_column("Breakdown")
    table.add_column("")
    for seat in sorted(result.seats, key=lambda s: (-s.score, -s.groschen)):
        breakdown = ", ".join(
            f"{item.name.replace('_', ' ')} {item.points}" for item in seat.breakdown if item.name != "total"
        )
        mark = Text("winner", style="bold yellow") if seat.seat in result.winners else Text("")
        if seat.resigned:
            mark.append(" resigned", style="dim")
        table.add_row(names.seat(seat.seat), str(seat.score), str(seat.groschen), breakdown, mark)
    return table
