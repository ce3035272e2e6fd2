"""Setting up a game: boards, bank, mines, player boards, starting groschen and the guild draft."""

from __future__ import annotations

import pytest

from kutnahora.engine import GameOptions, SetupError, new_game, state_hash
from kutnahora.engine.components import Color, Commodity, Deck
from kutnahora.engine.economy import price
from kutnahora.engine.mine import draws_per_mine_action
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.rounds import rounds_in_game
from kutnahora.engine.setup import guild_sets
from kutnahora.engine.state import Phase
from tests.engine.conftest import kind, play, started, texts


@pytest.mark.parametrize("players", [2, 3, 4])
def test_starting_groschen_by_seat_order(players: int) -> None:
    """000 · Starting Groschen: first player 40, second 41, third 42, fourth 43."""
    state = started(players)
    assert [p.groschen for p in state.players] == [40, 41, 42, 43][:players]


def test_player_pieces_at_the_start() -> None:
    """000 · Player Setup: 1 miner in the pool and 8 waiting, reputation 0, score 0, 6 action cards in
    hand, 3 plot markers on the board, 12 houses in their rows, production at 0."""
    state = started(4)
    for player in state.players:
        assert (player.miners_pool, player.miners_reserve) == (1, 8)
        assert (player.reputation, player.points) == (0, 0)
        assert sorted(player.hand) == [1, 2, 3, 4, 5, 6]
        assert player.plots == [] and player.slots == [] and player.buildings == []
        assert player.houses_removed == [0, 0, 0]
        assert all(v == 0 for v in player.production.values()) and player.mine_ore == 0
        assert (player.pelicans, player.pelicans_used) == (0, 0)


@pytest.mark.parametrize(("players", "rounds"), [(2, 6), (3, 6), (4, 5)])
def test_rounds_track_side(players: int, rounds: int) -> None:
    """000 · Rounds Track: a 4-player game uses the side with five rounds, 2 or 3 players six; the rounds
    counter starts on round 1 and the tax counter on 0."""
    state = started(players)
    assert rounds_in_game(state) == rounds
    assert state.round == 1
    if players != 2:  # two-player games reveal an event, which may raise the tax (tested below)
        assert state.tax == 0


def test_town_hall_board_setup() -> None:
    """000 · Town Hall Board: the six marked guild tiles are dealt to the two leftmost columns at the
    bottom of their guild's stack of four; the green, silver and yellow stacks stand at the end of a row;
    the red-patrician buildings wait on the rounds track."""
    state = started(4)
    components = state.components
    for row, color in zip(state.town_hall, (Color.GREEN, Color.SILVER, Color.YELLOW), strict=True):
        assert len(row) == 3
        for stack in row[:2]:
            bottom = components.building(stack.tiles[0])
            assert bottom.bottom and bottom.guild is not None and bottom.guild.value == stack.label
            assert len(stack.tiles) == 4
            assert {components.building(t).guild for t in stack.tiles} == {bottom.guild}
        public = row[2]
        assert public.label == color.value and len(public.tiles) == 3
        assert {components.building(t).color for t in public.tiles} == {color}
    guild_labels = [stack.label for row in state.town_hall for stack in row[:2]]
    assert len(set(guild_labels)) == 6
    assert sorted(state.red_stack) == sorted(b.id for b in components.buildings if b.color is Color.RED)


def test_marked_tiles_are_dealt_at_random() -> None:
    """000 · Town Hall Board · 4: the marked tiles are shuffled and dealt randomly to the six spaces."""
    layouts = {
        tuple(stack.label for row in started(4, seed).town_hall for stack in row[:2]) for seed in range(8)
    }
    assert len(layouts) > 1


@pytest.mark.parametrize(("players", "side"), [(2, "small"), (3, "large"), (4, "large")])
def test_city_board_side(players: int, side: str) -> None:
    """000 · Kutná Hora Board: 3 or 4 players use the side with more squares, 2 players the other;
    with no building in town every free square may be claimed (003 · The Plot action)."""
    state = started(players)
    board = state.components.city_boards[side]
    assert board is state.components.board_for(players)
    play(state, "play 2 plot")
    assert len(state.pending.options) == len(board.squares())
    small, large = state.components.city_boards["small"], state.components.city_boards["large"]
    assert len(small.squares()) < len(large.squares())


def test_rocks_follow_the_mine_setup_card() -> None:
    """000 · Kutná Hora Board · 6-7: one mine setup card; the four rock tiles are dealt to its squares."""
    state = started(4, mine_setup_card=3)
    card = state.components.mine_setup_cards[2]
    assert state.mine_setup_card == 3
    assert set(state.rocks) == set(card.squares)
    assert sorted(state.rocks.values()) == sorted(r.id for r in state.components.rock_tiles)


def test_mine_stack_tiers_and_technology() -> None:
    """000 · Common Play Area · 11-12: tier I tiles on top, II in the middle, III at the bottom; the
    mining technology stack starts at level 1, so a Mine action draws one tile."""
    state = started(4)
    tiers = [state.components.mine_tile(t).tier for t in reversed(state.mine_stack)]  # top first
    assert len(tiers) == 27 and tiers == sorted(tiers)
    assert state.mine_discard == []
    assert state.technology_taken == 0 and draws_per_mine_action(state) == 1


def test_common_play_area() -> None:
    """000 · Common Play Area · 8-10: arms on the left, decks at card 0, St. Barbara tile 1 current,
    exactly 3 patrician tokens of each colour in the bank."""
    state = started(4)
    assert set(state.arms.values()) == {0}
    assert state.deck_position == {Deck.POPULATION: 0, Deck.ORE: 0}
    assert state.barbara_next == 1
    assert state.patrician_bank == dict.fromkeys(Color, 3)
    assert sum(state.patrician_pool.values()) == 0 and sum(state.council.values()) == 0
    card = state.components.population_deck.cards[0]
    assert price(state, Commodity.WOOD) == card.prices[Commodity.WOOD][0]


def test_guild_draft_in_reverse_order() -> None:
    """000 · Guild Setup: in reverse order each player chooses one set, starting with the last player and
    finishing with the starting player, who has only one choice."""
    state = new_game(GameOptions(players=4, guild_setup_card=1), 1)
    seats, counts = [], []
    while state.phase is Phase.GUILD_SETS:
        assert kind(state) is DecisionKind.GUILD_SET
        seats.append(state.pending.seat)
        counts.append(len(texts(state)))
        play(state, texts(state)[-1])
    assert seats == [3, 2, 1, 0]
    assert counts == [4, 3, 2, 1]
    sets = guild_sets(state)
    assert [p.guild_set for p in state.players] == [sets[0], sets[1], sets[2], sets[3]]


def test_guild_rows_chosen_in_seat_order() -> None:
    """000 · Guild Setup: then everyone chooses which guild goes in which row, starting with the first
    player; any order of the player's three guilds may be chosen."""
    state = new_game(GameOptions(players=3, guild_setup_card=2), 5)
    while state.phase is Phase.GUILD_SETS:
        play(state, texts(state)[0])
    seats = []
    while state.phase is Phase.GUILD_ROWS:
        seat = state.pending.seat
        seats.append(seat)
        options = texts(state)
        assert len(options) == 6
        play(state, options[-1])
        assert sorted(state.players[seat].guilds) == sorted(state.players[seat].guild_set)
        assert state.players[seat].guilds != state.players[seat].guild_set  # the last arrangement
    assert seats == [0, 1, 2]
    assert state.phase is Phase.TURNS and state.pending.seat == 0


def test_guild_setup_card_row_matches_player_count() -> None:
    """000 · Guild Setup: use the row of the guild setup card matching how many players you have."""
    for players in (2, 3, 4):
        state = started(players, guild_setup_card=4)
        card = state.components.guild_setup_cards[3]
        assert sorted(p.guild_set for p in state.players) == sorted(card.rows[players])


def test_two_player_events_are_dealt_and_round_one_revealed() -> None:
    """000 · Two-Player Game – Event Card Setup: rounds before the red-patrician stack have A events,
    the rounds after have B events, the last round has none; the round 1 event's tax is added now."""
    for seed in range(6):
        state = started(2, seed)
        track = state.components.rounds_tracks[2]
        decks = [None if e is None else state.components.event_cards[e].deck for e in state.events]
        expected = ["A"] * track.red_arrival_round + ["B"] * (track.rounds - track.red_arrival_round - 1)
        assert decks == [*expected, None]
        first = state.events[0]
        assert first is not None
        assert state.tax == state.components.event_cards[first].tax


def test_events_are_optional_with_three_or_four() -> None:
    """000 · Two-Player Game – Event Card Setup: event cards can also be used with 3 or 4 players, but
    they are not necessary (docs/rules.md#r11: a game option)."""
    assert started(4).events == []
    state = started(4, events=True)
    decks = [None if e is None else state.components.event_cards[e].deck for e in state.events]
    assert decks == ["A", "A", "B", "B", None]  # red buildings arrive at the end of round 2


def test_a_seed_defines_the_setup() -> None:
    """docs/rules.md#r14: every shuffle comes from the game's seeded generator."""
    assert state_hash(started(3, 11)) == state_hash(started(3, 11))
    assert state_hash(started(3, 11)) != state_hash(started(3, 12))


@pytest.mark.parametrize("players", [1, 5])
def test_player_count_is_two_to_four(players: int) -> None:
    """000 · Board Setup: the game is for 2, 3 or 4 players."""
    with pytest.raises(SetupError):
        new_game(GameOptions(players=players), 1)
