"""Setting up a game for two, three or four players (000 · Board Setup, Player Setup, Guild Setup).

Everything random (the guild and mine setup cards, rock tiles, town-hall stacks, the mine stack by tiers,
events) is drawn from the game's one seeded generator, in a fixed order, so a seed defines the setup.
The guild draft that follows is made of decisions (:mod:`kutnahora.engine.flow`).
"""

from __future__ import annotations

import random

from kutnahora.engine.components import Color, ComponentSet, Deck, Guild
from kutnahora.engine.state import GameOptions, GameState, Phase, PlayerState, TownHallStack

MIN_PLAYERS = 2
MAX_PLAYERS = 4


class SetupError(ValueError):
    """The game options cannot be used to start a game."""


def check_options(options: GameOptions, components: ComponentSet) -> None:
    """Refuse options no game can be started with, with a sentence saying why."""
    if not MIN_PLAYERS <= options.players <= MAX_PLAYERS:
        raise SetupError(f"players must be 2, 3 or 4, not {options.players}")
    card = options.guild_setup_card
    if card is not None and not 1 <= card <= len(components.guild_setup_cards):
        raise SetupError(f"guild setup card must be 1..{len(components.guild_setup_cards)}, not {card}")
    card = options.mine_setup_card
    if card is not None and not 1 <= card <= len(components.mine_setup_cards):
        raise SetupError(f"mine setup card must be 1..{len(components.mine_setup_cards)}, not {card}")


def setup_state(components: ComponentSet, options: GameOptions, seed: int) -> GameState:
    """A game ready for the guild draft."""
    check_options(options, components)
    rng = random.Random(seed)
    n = options.players
    players = [
        PlayerState(
            seat=seat,
            groschen=components.starting_groschen[seat],
            miners_pool=components.starting_miners_in_pool,
            miners_reserve=components.miners_per_player - components.starting_miners_in_pool,
            hand=[card.number for card in components.action_cards],
        )
        for seat in range(n)
    ]
    state = GameState(components=components, options=options, seed=seed, rng=rng, players=players)
    state.deck_position = {Deck.POPULATION: 0, Deck.ORE: 0}
    state.patrician_bank = dict.fromkeys(Color, components.patricians_per_color)
    state.patrician_pool = dict.fromkeys(Color, 0)
    state.council = dict.fromkeys(Color, 0)

    # Town hall: the marked guild tiles dealt to the two leftmost columns, the public stack at the end.
    bottoms = [b for b in components.buildings if b.guild is not None and b.bottom]
    rng.shuffle(bottoms)
    rows: list[list[TownHallStack]] = [[] for _ in components.town_hall_rows]
    for index, bottom in enumerate(bottoms):
        assert bottom.guild is not None
        others = [b.id for b in components.buildings if b.guild is bottom.guild and not b.bottom]
        rng.shuffle(others)
        rows[index % len(rows)].append(TownHallStack(bottom.guild.value, [bottom.id, *others]))
    for row, color in zip(rows, components.town_hall_rows, strict=True):
        public = [b.id for b in components.buildings if b.color is color]
        rng.shuffle(public)
        row.append(TownHallStack(color.value, public))
    state.town_hall = rows
    state.red_stack = [b.id for b in components.buildings if b.color is Color.RED]

    # Mines: a setup card places the shuffled rock tiles; the stack holds tier I on top, III at the bottom.
    if options.mine_setup_card is None:
        state.mine_setup_card = rng.randrange(len(components.mine_setup_cards)) + 1
    else:
        state.mine_setup_card = options.mine_setup_card
    rocks = [r.id for r in components.rock_tiles]
    rng.shuffle(rocks)
    setup_card = components.mine_setup_cards[state.mine_setup_card - 1]
    state.rocks = dict(zip(setup_card.squares, rocks, strict=False))
    stack: list[int] = []
    for tier in (3, 2, 1):
        tiles = [t.id for t in components.mine_tiles if t.tier == tier]
        rng.shuffle(tiles)
        stack.extend(tiles)
    state.mine_stack = stack
    state.mine_discards_seen = [[] for _ in range(n)]

    # Events: two players always, three or four when asked; A before the red arrival, B after, none last.
    if options.uses_events():
        track = components.rounds_tracks[n]
        decks = {name: [e.id for e in components.event_cards if e.deck == name] for name in ("A", "B")}
        for deck in decks.values():
            rng.shuffle(deck)
        events: list[int | None] = []
        for round_number in range(1, track.rounds + 1):
            if round_number == track.rounds:
                events.append(None)
            else:
                deck = decks["A" if round_number <= track.red_arrival_round else "B"]
                events.append(deck.pop() if deck else None)
        state.events = events

    # Guild draft: a random card (or the one asked for); sets are chosen in reverse seat order.
    if options.guild_setup_card is None:
        state.guild_setup_card = rng.randrange(len(components.guild_setup_cards)) + 1
    else:
        state.guild_setup_card = options.guild_setup_card
    state.guild_sets_left = list(range(n))
    state.phase = Phase.GUILD_SETS
    return state


def guild_sets(state: GameState) -> tuple[tuple[Guild, Guild, Guild], ...]:
    """The guild sets on this game's setup card for its player count."""
    card = state.components.guild_setup_cards[state.guild_setup_card - 1]
    return card.rows[state.options.players]
