"""The arena end to end: a game server process, an arena process, and bots of three kinds seeking in the
2- and 4-player pools at once (some in both, two of them ``kutnahora-bot`` processes that register
themselves), with random house bots so that the last bots still find games. Checked from the arena's own
store, independently of its code: every bot got games, no bot sat in two games of one pool at once,
greedy ends above random, the stored ratings equal a fresh openskill computation over the stored results,
and a restart keeps accounts and ratings."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import subprocess
from pathlib import Path

from openskill.models import PlackettLuce
from rich.console import Console

from kutnahora.clients.bots import make_bot
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.sdk import ArenaClient
from tests.arena.conftest import start_process, stop_process
from tests.clients.helpers import ROOT, python_module

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


async def test_bots_of_three_kinds_in_two_pools(tmp_path: Path, game_server: str) -> None:
    db = tmp_path / "arena.db"
    process, address = start_arena(db, game_server)
    try:
        async with await ArenaClient.connect(address) as arena:
            keys = {name: await arena.register_bot(name) for name in ("g1", "g2", "g3", "r1", "r2", "r3")}
        mcts = [
            subprocess.Popen(
                python_module(
                    "kutnahora.clients.bots.cli",
                    "mcts",
                    "--iterations",
                    "8",
                    "--arena",
                    address,
                    "--register",
                    name,
                    "--key-file",
                    str(tmp_path / f"{name}.key"),
                    "--pool",
                    "2,4",
                    "--games",
                    "2",
                    "--quiet",
                ),
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("m1", "m2")
        ]
        console = Console(quiet=True)

        def loop(name: str, pools: list[str], games: int) -> asyncio.Future[object]:
            kind = "greedy" if name.startswith("g") else "random"
            return asyncio.ensure_future(
                play_rated(
                    address, keys[name], pools, games, lambda: make_bot(kind, None), console, quiet=True
                )
            )

        loops = [
            loop("g1", ["2", "4"], 3),
            loop("g2", ["2"], 4),
            loop("r1", ["2", "4"], 3),
            loop("r2", ["2"], 4),
        ]
        loops += [loop("g3", ["4"], 3), loop("r3", ["4"], 3)]
        results = await asyncio.wait_for(asyncio.gather(*loops), 300)
        assert all(outcomes for outcomes in results)  # type: ignore[arg-type]
        for bot in mcts:
            out, err = await asyncio.to_thread(bot.communicate, timeout=300)
            assert bot.returncode == 0, out + err
        assert all((tmp_path / f"{name}.key").read_text().strip() for name in ("m1", "m2"))

        async with await ArenaClient.connect(address) as arena:
            for _ in range(100):  # the last results are rated a moment after their games end
                profiles = {name: await arena.bot_profile(name) for name in [*keys, "m1", "m2"]}
                if not any(g.status == "active" for p in profiles.values() for g in p.recent_games):
                    break
                await asyncio.sleep(0.2)
            for name, profile in profiles.items():
                assert sum(r.games for r in profile.ratings) >= 2, f"{name} got no games"
            board2 = await arena.leaderboard("2")
            board4 = await arena.leaderboard("4")
        assert overlapping(db) == []

        def mean(board: object, prefix: str) -> float:
            values = [e.rating.mu for e in board.entries if e.name.startswith(prefix)]  # type: ignore[attr-defined]
            return sum(values) / len(values)

        assert mean(board2, "g") > mean(board2, "r"), board2
        assert mean(board4, "g") > mean(board4, "r"), board4

        stored = stored_ratings(db)
        assert stored and stored == independent_ratings(db)
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
