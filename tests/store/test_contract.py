"""The store contract: what the server relies on from every store, checked on memory, SQLite and PostgreSQL.

A game is a creation record, its seats and an append-only log; writes are durable on return; a second
decision N of a game is refused with DuplicateDecision, even when two store instances (two replicas)
race for it; reads give back exactly what was written.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools

import pytest

from kutnahora.server.store import (
    DecisionRow,
    DuplicateDecision,
    GameQuery,
    GameRow,
    SeatRow,
    Store,
    StoreError,
)
from tests.store.conftest import Backend, OpenStore

_clock = itertools.count(1)


def make_game(game_id: str, *, created_at: float | None = None, label: str = "", players: int = 3) -> GameRow:
    """A game record with every field set to something other than its default."""
    return GameRow(
        game_id=game_id,
        created_at=created_at if created_at is not None else 1_700_000_000.0 + next(_clock),
        players=players,
        events=True,
        guild_setup_card=2,
        mine_setup_card=None,
        seed=2**62 + 12345,
        clock={"decision_ms": 1500, "bank_ms": 60_000, "max_strikes": 3, "enabled": True},
        label=label,
        game_token_hash="ab" * 32,
        rules_version=1,
        status="waiting",
        updated_at=1_700_000_000.5,
    )


def empty_seats(players: int) -> list[SeatRow]:
    """The seats of a new game: nobody has joined."""
    return [SeatRow(seat=seat) for seat in range(players)]


def decision(seq: int, seat: int = 0, option: str = "skip") -> DecisionRow:
    """One decision row."""
    return DecisionRow(
        seq=seq, seat=seat, option=option, source="seat", think_ms=7 + seq, applied_at=1e9 + seq
    )


async def test_a_new_game_reads_back_exactly(store: Store) -> None:
    game = make_game("g-read", label="cup")
    await store.create_game(game, empty_seats(3))
    stored = await store.load_game("g-read")
    assert stored is not None
    assert stored.game == game
    assert stored.game.version == 0
    assert stored.seats == tuple(empty_seats(3))
    assert stored.decisions == ()


async def test_a_game_created_with_its_seats_taken_reads_them_back(store: Store) -> None:
    game = dataclasses.replace(make_game("g-seated", players=2), status="active")
    seats = [
        SeatRow(seat=0, name="ann", token_hash="ab" * 32, joined_at=1_700_000_000.5),
        SeatRow(seat=1, name="bob", token_hash="cd" * 32, joined_at=1_700_000_000.5),
    ]
    await store.create_game(game, seats)
    stored = await store.load_game("g-seated")
    assert stored is not None
    assert stored.game == game
    assert stored.seats == tuple(seats)
    assert all(seat.joined for seat in stored.seats)


async def test_an_unknown_game_loads_as_none(store: Store) -> None:
    assert await store.load_game("no-such-game") is None


async def test_a_game_id_is_created_once(store: Store) -> None:
    await store.create_game(make_game("g-twice"), empty_seats(3))
    with pytest.raises(StoreError):
        await store.create_game(make_game("g-twice"), empty_seats(3))


async def test_decisions_append_in_order_and_count_as_the_version(store: Store) -> None:
    await store.create_game(make_game("g-log"), empty_seats(3))
    rows = [decision(seq, seat=seq % 3, option=f"play {seq % 4} none") for seq in range(25)]
    for row in rows:
        await store.append_decision("g-log", row)
    stored = await store.load_game("g-log")
    assert stored is not None
    assert stored.decisions == tuple(rows)
    assert stored.game.version == 25


async def test_a_second_decision_n_is_refused_and_changes_nothing(store: Store) -> None:
    await store.create_game(make_game("g-dup"), empty_seats(3))
    await store.append_decision("g-dup", decision(0, option="first"))
    await store.append_decision("g-dup", decision(1, option="second"))
    with pytest.raises(DuplicateDecision):
        await store.append_decision("g-dup", decision(1, option="other"))
    with pytest.raises(DuplicateDecision):
        await store.append_decision("g-dup", decision(0, option="other"))
    stored = await store.load_game("g-dup")
    assert stored is not None
    assert [d.option for d in stored.decisions] == ["first", "second"]


async def test_a_decision_for_an_unknown_game_is_refused(
    store: Store,
) -> None:
    with pytest.raises(StoreError) as raised:
        await store.append_decision("no-such-game", decision(0))
    assert not isinstance(raised.value, DuplicateDecision)


async def test_a_gap_in_the_log_is_refused(
    store: Store,
) -> None:
    await store.create_game(make_game("g-gap"), empty_seats(2))
    await store.append_decision("g-gap", decision(0))
    with pytest.raises(StoreError) as raised:
        await store.append_decision("g-gap", decision(2))
    assert not isinstance(raised.value, DuplicateDecision)
    stored = await store.load_game("g-gap")
    assert stored is not None
    assert stored.game.version == 1


async def test_seats_record_joins_and_resignations(store: Store) -> None:
    await store.create_game(make_game("g-seats"), empty_seats(3))
    joined = SeatRow(
        seat=1, name="greedy-bot", token_hash="cd" * 32, resigned=False, joined_at=1_700_000_100.25
    )
    await store.save_seat("g-seats", joined)
    resigned = SeatRow(seat=2, name="random", token_hash="ef" * 32, resigned=True, joined_at=1_700_000_101.0)
    await store.save_seat("g-seats", resigned)
    stored = await store.load_game("g-seats")
    assert stored is not None
    assert stored.seats == (SeatRow(seat=0), joined, resigned)
    assert stored.seats[1].joined and not stored.seats[0].joined


async def test_status_changes_keep_the_result_and_the_reason(store: Store) -> None:
    await store.create_game(make_game("g-done"), empty_seats(2))
    await store.create_game(make_game("g-gone"), empty_seats(2))
    result = {"scores": [41, 37], "groschen": [3, 9], "winners": [0], "detail": {"tie_break": None}}
    await store.set_status("g-done", "active", 1_700_000_200.0)
    await store.set_status("g-done", "finished", 1_700_000_300.0, result=result)
    await store.set_status("g-gone", "abandoned", 1_700_000_400.0, abandon_reason="every seat resigned")
    done = await store.load_game("g-done")
    gone = await store.load_game("g-gone")
    assert done is not None and gone is not None
    assert (done.game.status, done.game.updated_at, done.game.result) == ("finished", 1_700_000_300.0, result)
    assert (gone.game.status, gone.game.abandon_reason, gone.game.result) == (
        "abandoned",
        "every seat resigned",
        None,
    )


async def test_a_game_is_ended_once_when_asked_to_end_only_an_unfinished_one(store: Store) -> None:
    """Two servers abandoning one game at once (or one finishing it while another abandons it): the
    conditional write changes only a game still waiting or active, and says whether it did."""
    await store.create_game(make_game("g-end"), empty_seats(2))
    assert await store.set_status("g-end", "active", 1_700_000_100.0)
    result = {"scores": [3, 1], "winners": [0]}
    assert await store.set_status("g-end", "finished", 1_700_000_200.0, result=result, unfinished_only=True)
    late = await store.set_status(
        "g-end", "abandoned", 1_700_000_300.0, abandon_reason="too late", unfinished_only=True
    )
    assert late is False
    stored = await store.load_game("g-end")
    assert stored is not None
    assert (stored.game.status, stored.game.result, stored.game.abandon_reason) == ("finished", result, "")
    await store.create_game(make_game("g-wait"), empty_seats(2))
    assert await store.set_status("g-wait", "abandoned", 1.0, abandon_reason="first", unfinished_only=True)
    assert not await store.set_status(
        "g-wait", "abandoned", 2.0, abandon_reason="second", unfinished_only=True
    )
    stored = await store.load_game("g-wait")
    assert stored is not None and stored.game.abandon_reason == "first"


async def test_listing_is_newest_first_filtered_and_paged(store: Store) -> None:
    for index in range(7):
        await store.create_game(
            make_game(
                f"g-list-{index}", created_at=1_800_000_000.0 + index, label="cup" if index % 2 else ""
            ),
            empty_seats(2),
        )
    await store.append_decision("g-list-5", decision(0))
    await store.set_status("g-list-3", "active", 1_800_000_100.0)

    everything = await store.list_games(GameQuery(limit=100))
    assert [g.game_id for g in everything] == [f"g-list-{i}" for i in range(6, -1, -1)]
    assert {g.game_id: g.version for g in everything}["g-list-5"] == 1

    cup = await store.list_games(GameQuery(label="cup", limit=100))
    assert [g.game_id for g in cup] == ["g-list-5", "g-list-3", "g-list-1"]
    active = await store.list_games(GameQuery(status="active", limit=100))
    assert [g.game_id for g in active] == ["g-list-3"]

    first = await store.list_games(GameQuery(limit=3))
    assert [g.game_id for g in first] == ["g-list-6", "g-list-5", "g-list-4"]
    last = first[-1]
    second = await store.list_games(GameQuery(limit=3, before=(last.created_at, last.game_id)))
    assert [g.game_id for g in second] == ["g-list-3", "g-list-2", "g-list-1"]


async def test_games_created_in_the_same_instant_page_by_id(store: Store) -> None:
    for game_id in ("g-same-a", "g-same-b", "g-same-c"):
        await store.create_game(make_game(game_id, created_at=1_900_000_000.0), empty_seats(2))
    first = await store.list_games(GameQuery(limit=2))
    assert [g.game_id for g in first] == ["g-same-c", "g-same-b"]
    rest = await store.list_games(GameQuery(limit=2, before=(first[-1].created_at, first[-1].game_id)))
    assert [g.game_id for g in rest] == ["g-same-a"]


async def test_unfinished_games_are_the_waiting_and_active_ones_oldest_first(store: Store) -> None:
    for index, status in enumerate(["finished", "active", "waiting", "abandoned", "active"]):
        await store.create_game(
            make_game(f"g-unf-{index}", created_at=1_600_000_000.0 + index), empty_seats(2)
        )
        if status != "waiting":
            await store.set_status(f"g-unf-{index}", status, 1_600_000_100.0)
    assert await store.unfinished_games() == ["g-unf-1", "g-unf-2", "g-unf-4"]


async def test_writes_survive_closing_and_reopening(open_store: OpenStore, backend: Backend) -> None:
    if not backend.shared:
        pytest.skip("a memory store does not outlive its process")
    first = await open_store()
    await first.create_game(make_game("g-durable"), empty_seats(2))
    await first.append_decision("g-durable", decision(0))
    await first.close()
    second = await open_store()
    stored = await second.load_game("g-durable")
    assert stored is not None
    assert stored.decisions == (decision(0),)


async def test_two_instances_racing_for_decision_n_exactly_one_wins(
    open_store: OpenStore, backend: Backend
) -> None:
    if not backend.shared:
        pytest.skip("two memory stores share nothing")
    left, right = await open_store(), await open_store()
    await left.create_game(make_game("g-race"), empty_seats(2))
    for seq in range(10):
        outcomes = await asyncio.gather(
            left.append_decision("g-race", decision(seq, seat=0, option=f"left {seq}")),
            right.append_decision("g-race", decision(seq, seat=1, option=f"right {seq}")),
            return_exceptions=True,
        )
        winners = [outcome for outcome in outcomes if outcome is None]
        losers = [outcome for outcome in outcomes if isinstance(outcome, DuplicateDecision)]
        assert (len(winners), len(losers)) == (1, 1), outcomes
    stored = await right.load_game("g-race")
    assert stored is not None
    assert [d.seq for d in stored.decisions] == list(range(10))


async def test_a_store_that_wrote_the_log_still_refuses_what_another_instance_stored(
    open_store: OpenStore, backend: Backend
) -> None:
    # The creating instance knows the log's length; another instance appends behind its back.
    if not backend.shared:
        pytest.skip("two memory stores share nothing")
    left, right = await open_store(), await open_store()
    await left.create_game(make_game("g-behind"), empty_seats(2))
    await right.append_decision("g-behind", decision(0, option="right 0"))
    await right.append_decision("g-behind", decision(1, option="right 1"))
    with pytest.raises(DuplicateDecision):
        await left.append_decision("g-behind", decision(0, option="left 0"))
    with pytest.raises(StoreError) as raised:
        await left.append_decision("g-behind", decision(3, option="left 3"))
    assert not isinstance(raised.value, DuplicateDecision)
    await left.append_decision("g-behind", decision(2, option="left 2"))
    await left.append_decision("g-behind", decision(3, option="left 3"))
    with pytest.raises(DuplicateDecision):
        await left.append_decision("g-behind", decision(3, option="again"))
    stored = await right.load_game("g-behind")
    assert stored is not None
    assert [d.option for d in stored.decisions] == ["right 0", "right 1", "left 2", "left 3"]
