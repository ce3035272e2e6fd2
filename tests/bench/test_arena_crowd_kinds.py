"""The crowd benchmark's account of the store's games (``python -m kutnahora.bench.arena_crowd``): each game
is one its bots were handed by a Seek, one placed from the last tickets of bots that stopped seeking as the
run ended, one a bot's event stream announced but no Seek handed over, or one lost (placed during the run,
never heard of); the benchmark fails on the last two."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kutnahora.arena import accounts, game_events, placements
from kutnahora.arena.store import ArenaStore
from kutnahora.bench.arena_crowd import games_by_kind
from tests.store.pg import fresh_schema


async def test_the_store_games_are_told_apart_by_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    for module in (accounts, game_events, placements):  # the clock of every write made here
        monkeypatch.setattr(module, "time", SimpleNamespace(time=lambda: now[0]))
    with fresh_schema("kh_crowd_kinds") as db:
        store = ArenaStore(db)
        await store.open()
        try:
            a, b, c, d = [(await store.register(f"crowd-{n}", f"hash-{n}")).account_id for n in range(4)]
            placed = {"played": 1000.0, "announced": 1001.0, "lost": 1002.0, "late": 1009.5, "after": 1012.0}
            for game_id, at in placed.items():
                now[0] = at
                await store.record_game(game_id, "2", "s:1", [a, b] if game_id != "after" else [c, d])
        finally:
            await store.close()
        # When the run ended crowd-1 was still waiting on a Seek it opened at 1009 (the "late" game was
        # made from it), crowd-3 on one opened at 1011.5 ("after"); crowd-0 and crowd-2 were playing.
        last_seeks = {"crowd-1": 1009.0, "crowd-3": 1011.5}
        kinds = games_by_kind(db, {"played"}, {"played", "announced"}, last_seeks)
    assert kinds == {"seen": 1, "announced": 1, "lost": 1, "ending": 2}
