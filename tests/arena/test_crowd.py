"""A crowd in one pool: eight ``kutnahora-bot`` processes (four greedy, four random, so that ratings part)
register with ``kutnahora-bot register`` and play 25 rated games each in pool 2 of an arena on PostgreSQL,
seeking again the moment each game ends. Every bot exits 0; the word TICKET_EXISTS (or ALREADY_EXISTS)
appears nowhere, neither in the bots' output nor in the arena's log, and the arena counted no such refusal;
the low-rated bots are not starved: 95% of the tickets were matched within the bound on waiting (1 s)
plus a few seconds, none waited over 30 s (the arena's time-to-match histogram says so), and from the
moment every bot had played a game to the moment the first had played its 25, no bot played fewer than
a third as many games as the one that played most (read from the store; a bot far from the others'
ratings waits up to the bound before each game, while the others may meet again at once: with games of
half a second to a second, that bot plays at least two games in five of the busiest one's).
A random house bot keeps the pool playable for the last bots, whose opponents have played their 25 and
left."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import psycopg

from tests.clients.helpers import ROOT, python_module
from tests.store.pg import fresh_schema

BOTS = 8
GAMES = 25
MAX_WAIT = 1.0
WAIT_LIMIT = 30.0  # seconds no ticket waits over (the bound holds while enough others wait; at the end the
# last bots wait for the house bot's game to end too)
WAIT_USUAL = 5.0  # seconds that 95% of the tickets wait at most: the bound, a tick and the game's creation
# A bot far from the others' ratings waits up to the bound (1 s) before each game while the others may meet
# again at once; with games of half a second or more it still plays over a third as many as the busiest.
SHARE = 1 / 3


def start_arena(db: str, game_server: str, log: Path) -> tuple[subprocess.Popen[str], str, str]:
    process = subprocess.Popen(
        python_module(
            "kutnahora.arena.main",
            *("--port", "0", "--metrics-port", "0", "--db", db, "--server", game_server),
            *("--pools", "2", "--window", "2", "--widen", "1", "--max-wait", str(MAX_WAIT)),
            *("--tick", "0.1", "--log-level", "info", "--house-bots", "random"),
        ),
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"listening on grpc://(\S+) \(metrics (\S+),", line)
    assert found is not None, f"the arena did not start: {line!r}"
    return process, found.group(1), found.group(2)


def rated_games(db: str) -> dict[str, int]:
    """Rated games per bot, read from the store with plain SQL."""
    with psycopg.connect(db) as conn:
        rows = conn.execute(
            "SELECT a.name, count(*) FROM arena_seats s JOIN arena_games g USING (game_id) "
            "JOIN arena_accounts a USING (account_id) WHERE g.status = 'finished' GROUP BY a.name"
        ).fetchall()
    return {str(name): int(count) for name, count in rows}


def histogram(metrics: str, name: str, pool: str) -> dict[float, float]:
    """The cumulative buckets of a histogram with a ``pool`` label: upper bound -> count."""
    buckets: dict[float, float] = {}
    for le, count in re.findall(rf'{name}_bucket\{{le="([^"]+)",pool="{pool}"\}} (\S+)', metrics):
        buckets[float(le)] = float(count)
    if not buckets:  # label order differs between client versions
        for le, count in re.findall(rf'{name}_bucket\{{pool="{pool}",le="([^"]+)"\}} (\S+)', metrics):
            buckets[float(le)] = float(count)
    return buckets


async def test_eight_bots_play_25_games_each_in_one_pool(tmp_path: Path, game_server: str) -> None:
    names = [f"crowd-{kind}-{n}" for kind in ("greedy", "random") for n in range(BOTS // 2)]
    with fresh_schema("kh_arena_crowd") as db:
        arena, address, metrics_url = start_arena(db, game_server, tmp_path / "arena.log")
        bots: list[subprocess.Popen[str]] = []
        try:
            registering = [
                subprocess.Popen(
                    python_module(
                        "kutnahora.clients.bots.cli",
                        *("register", name, "--key-file", str(tmp_path / f"{name}.key"), "--arena", address),
                    ),
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                for name in names
            ]
            for process in registering:
                output, _ = process.communicate(timeout=120)
                assert process.returncode == 0, output
                assert "Registered" in output
            assert rated_games(db) == {}, "registering plays no game"
            bots = [
                subprocess.Popen(
                    python_module(
                        "kutnahora.clients.bots.cli",
                        name.split("-")[1],
                        *("--arena", address, "--key-file", str(tmp_path / f"{name}.key")),
                        *("--pool", "2", "--games", str(GAMES)),
                    ),
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                for name in names
            ]
            deadline = time.monotonic() + 600
            # Progress is counted from the moment every bot has played a game (the processes start
            # seconds apart on a busy machine), up to the moment the first has played all of its.
            started: dict[str, int] | None = None
            behind_at_first_finish: dict[str, int] | None = None
            while any(bot.poll() is None for bot in bots) and time.monotonic() < deadline:
                counts = await asyncio.to_thread(rated_games, db)
                if started is None and all(counts.get(name, 0) >= 1 for name in names):
                    started = {name: counts[name] for name in names}
                if (
                    started is not None
                    and behind_at_first_finish is None
                    and max(counts.values(), default=0) >= GAMES
                ):
                    behind_at_first_finish = {name: counts[name] - started[name] for name in names}
                await asyncio.sleep(0.5)
            outputs = []
            for name, bot in zip(names, bots, strict=True):
                output, _ = bot.communicate(timeout=30)
                outputs.append(output)
                assert bot.returncode == 0, f"{name} exited {bot.returncode}:\n{output[-2000:]}"
                assert f"game {GAMES}/{GAMES}" in output, output[-2000:]
            metrics = await asyncio.to_thread(
                lambda: urllib.request.urlopen(metrics_url, timeout=5).read().decode()
            )
        finally:
            for bot in bots:
                if bot.poll() is None:
                    bot.kill()
                    bot.wait()
            arena.terminate()
            arena.wait(15)
        log = (tmp_path / "arena.log").read_text()
        for text in (*outputs, log, metrics):
            assert "TICKET_EXISTS" not in text.upper() and "ALREADY_EXISTS" not in text.upper()
        assert 'reason="ticket_exists"' not in metrics
        counts = rated_games(db)
        assert min(counts.get(name, 0) for name in names) >= GAMES
        # Not starved: every ticket was matched within the bound's reach, and nobody fell far behind.
        buckets = histogram(metrics, "kutnahora_arena_time_to_match_seconds", "2")
        assert buckets[float("inf")] >= BOTS * GAMES
        within = max(le for le in buckets if le <= WAIT_LIMIT)
        assert buckets[within] == buckets[float("inf")], f"tickets waited over {within} s: {buckets}"
        usual = max(le for le in buckets if le <= WAIT_USUAL)
        assert buckets[usual] >= 0.95 * buckets[float("inf")], f"over 5% waited over {usual} s: {buckets}"
        assert behind_at_first_finish is not None
        most = max(behind_at_first_finish.values())
        assert min(behind_at_first_finish.values()) >= SHARE * most, behind_at_first_finish
