"""The arena end to end: a game server process, an arena process, and twelve bots of three kinds (greedy,
random, and the search bot as ``kutnahora-bot`` processes that register themselves) seeking in the 2- and
4-player pools at once, 20 games in each, with random house bots so that the last bots still find games.
Checked from the arena's own store, independently of its code: every bot played its 40 games, no bot sat
in two games of one pool at once, greedy ends above random, the stored ratings equal a fresh openskill
computation over the stored results, and a restart keeps accounts and ratings."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import subprocess
from pathlib import Path

from openskill.models import PlackettLuce
from rich.console import Console

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.bots import make_bot
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.sdk import GameOutcome
from tests.clients.helpers import ROOT, python_module, start_process, stop_process

ARENA_FLAGS = ("--port", "0", "--metrics-port", "0", "--window", "5", "--widen", "5", "--open-after", "1")
ARENA_FLAGS += ("--tick", "0.05", "--log-level", "warning", "--house-bots", "random")


def start_arena(db: Path, game_server: str) -> tuple[subprocess.Popen[str], str]:
    return start_process("kutnahora.arena.main", *ARENA_FLAGS, "--db", str(db), "--server", game_server)


def independent_ratings(db: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """openskill over the stored results, read with plain SQL, in the order they were rated."""
    model = PlackettLuce()
    ratings: dict[tuple[str, str], object] = {}
    with sqlite3.connect(db) as conn:
        games = conn.execute(
            "SELECT game_id, pool FROM arena_games WHERE status = 'finished' ORDER BY rated_seq"
        ).fetchall()
        for game_id, pool in games:
            seats = conn.execute(
                "SELECT a.name, s.place FROM arena_seats s JOIN arena_accounts a USING (account_id) "
                "WHERE s.game_id = ? ORDER BY s.seat",
                (game_id,),
            ).fetchall()
            teams = [[ratings.get((name, pool)) or model.rating()] for name, _ in seats]
            after = model.rate(teams, ranks=[place for _, place in seats])  # type: ignore[arg-type]
            for (name, _), team in zip(seats, after, strict=True):
                ratings[(name, pool)] = team[0]
    return {key: (r.mu, r.sigma) for key, r in ratings.items()}  # type: ignore[attr-defined]


def stored_ratings(db: Path) -> dict[tuple[str, str], tuple[float, float]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT a.name, r.pool, r.mu, r.sigma FROM arena_ratings r "
            "JOIN arena_accounts a USING (account_id)"
        ).fetchall()
    return {(name, pool): (mu, sigma) for name, pool, mu, sigma in rows}


def overlapping(db: Path) -> list[tuple[str, str, str, str]]:
    """Pairs of games of one pool whose times overlap and that share a bot."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT a.name, g.pool, g.game_id, g.created_at, g.ended_at FROM arena_seats s "
            "JOIN arena_games g USING (game_id) JOIN arena_accounts a USING (account_id) "
            "ORDER BY a.name, g.pool, g.created_at"
        ).fetchall()
    found = []
    for first, second in itertools.pairwise(rows):
        if first[:2] == second[:2] and first[4] is not None and second[3] < first[4]:
            found.append((first[0], first[1], first[2], second[2]))
    return found


GAMES = 20
"""Games each greedy and random bot plays in each of the two pools: 40 in all."""
SEARCH_GAMES = 8
"""Games each search bot plays in each pool (it thinks longer than the others)."""
GREEDY = ("g1", "g2", "g3", "g4")
RANDOM = ("r1", "r2", "r3", "r4")
SEARCH = ("m1", "m2", "m3", "m4")
"""The third kind: the search bot on a tiny budget, each a ``kutnahora-bot`` process registering itself."""


async def test_twelve_bots_of_three_kinds_in_two_pools(tmp_path: Path, game_server: str) -> None:
    db = tmp_path / "arena.db"
    process, address = start_arena(db, game_server)
    try:
        async with await ArenaClient.connect(address) as arena:
            keys = {name: await arena.register_bot(name) for name in GREEDY + RANDOM}
        searchers = [
            subprocess.Popen(
                python_module(
                    "kutnahora.clients.bots.cli",
                    "mcts",
                    "--iterations",
                    "2",
                    "--arena",
                    address,
                    "--register",
                    name,
                    "--key-file",
                    str(tmp_path / f"{name}.key"),
                    "--pool",
                    "2,4",
                    "--games",
                    str(SEARCH_GAMES),
                    "--quiet",
                ),
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in SEARCH
        ]
        console = Console(quiet=True)

        def loop(name: str) -> asyncio.Future[list[GameOutcome]]:
            kind = "greedy" if name in GREEDY else "random"
            return asyncio.ensure_future(
                play_rated(
                    address, keys[name], ["2", "4"], GAMES, lambda: make_bot(kind, None), console, quiet=True
                )
            )

        results = await asyncio.wait_for(asyncio.gather(*(loop(name) for name in keys)), 600)
        assert all(len(outcomes) == 2 * GAMES for outcomes in results)
        for bot in searchers:
            out, err = await asyncio.to_thread(bot.communicate, timeout=600)
            assert bot.returncode == 0, out + err
        assert all((tmp_path / f"{name}.key").read_text().strip() for name in SEARCH)

        everyone = GREEDY + RANDOM + SEARCH
        async with await ArenaClient.connect(address) as arena:
            for _ in range(100):  # the last results are rated a moment after their games end
                profiles = {name: await arena.bot_profile(name) for name in everyone}
                if not any(g.status == "active" for p in profiles.values() for g in p.recent_games):
                    break
                await asyncio.sleep(0.2)
            for name, profile in profiles.items():
                games = {r.pool: r.games for r in profile.ratings}
                each = SEARCH_GAMES if name in SEARCH else GAMES
                assert games == {"2": each, "4": each}, f"{name} played {games}"
            board2 = await arena.leaderboard("2")
            board4 = await arena.leaderboard("4")
        assert overlapping(db) == [], "no bot sat in two games of one pool at once"

        def mean(board: object, names: tuple[str, ...]) -> float:
            values = [e.rating.mu for e in board.entries if e.name in names]  # type: ignore[attr-defined]
            assert len(values) == len(names)
            return sum(values) / len(values)

        assert mean(board2, GREEDY) > mean(board2, RANDOM), board2
        assert mean(board4, GREEDY) > mean(board4, RANDOM), board4

        stored = stored_ratings(db)
        assert len(stored) >= 2 * len(everyone) and stored == independent_ratings(db)
    finally:
        stop_process(process)

    process, address = start_arena(db, game_server)
    try:
        async with await ArenaClient.connect(address) as arena:
            again = await arena.leaderboard("2")
            assert [(e.name, e.rating.mu, e.rating.sigma) for e in again.entries] == [
                (e.name, e.rating.mu, e.rating.sigma) for e in board2.entries
            ]
            assert await arena.rotate_key(keys["g1"]), "the account and its key survived the restart"
        assert stored_ratings(db) == stored
    finally:
        stop_process(process)
