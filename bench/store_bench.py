"""The SQLite store's appends with many games: CPU per decision, committed together or one by one.

A server's games each append a decision and then give the event loop to the others (the rest of their
turn: the observation, the network), so several games' decisions arrive in each turn of the loop. Here
``--games`` games each append their next decision and yield, over and over, to a SQLite file as the server
keeps it (WAL, ``synchronous=NORMAL``), ``--moving`` of them in each turn of the loop (a server with 64
games on a 2-core machine commits about 12 decisions a transaction: ``kutnahora-bench`` reports it). Each
repeat measures the process's CPU per decision twice, with the decisions of one turn of the event loop
committed in one transaction (the server's way) and with each committed at once, alternately, and reports
the medians, their ratio, and the decisions per commit.

    python -m kutnahora.bench.store_bench --games 64 --moving 12 --decisions 200 --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from kutnahora.server.sqlite_store import SqliteStore
from kutnahora.server.store import DecisionRow, GameRow, SeatRow

OPTION = '{"kind":"mine","args":[3,4]}'
"""A decision's canonical text of a typical length."""


@dataclass
class Appends:
    """One measurement: CPU microseconds per decision appended, and the decisions per commit."""

    grouped: bool
    cpu_us: float
    per_commit: float


def process_cpu() -> float:
    """User plus system CPU seconds of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def game_row(game_id: str) -> GameRow:
    """A two-seat game's creation record."""
    now = time.time()
    return GameRow(
        game_id=game_id,
        created_at=now,
        players=2,
        events=False,
        guild_setup_card=None,
        mine_setup_card=None,
        seed=1,
        clock={},
        label="",
        game_token_hash="",
        rules_version=1,
        status="active",
        updated_at=now,
    )


async def measure(folder: Path, name: str, games: int, moving: int, decisions: int, grouped: bool) -> Appends:
    """Append ``decisions`` decisions to each of ``games`` new games in a new file, about ``moving`` of
    them in each turn of the event loop."""
    every = max(1, round(games / moving))  # each game appends once in this many turns
    commits = [0, 0]

    def on_commit(seconds: float, writes: int) -> None:
        commits[0] += 1
        commits[1] += writes

    store = SqliteStore(folder / name, "NORMAL", on_commit=on_commit, group_appends=grouped)
    await store.open()
    try:
        ids = [f"game-{n}" for n in range(games)]
        for game_id in ids:
            await store.create_game(game_row(game_id), [SeatRow(seat=0), SeatRow(seat=1)])
        commits[:] = [0, 0]

        async def play(index: int, game_id: str) -> None:
            for _ in range(index % every):  # the games take their turns staggered
                await asyncio.sleep(0)
            for seq in range(decisions):
                row = DecisionRow(seq, seq % 2, OPTION, "seat", 5, time.time())
                await store.append_decision(game_id, row)
                for _ in range(every):  # the rest of the game's turn: the others move meanwhile
                    await asyncio.sleep(0)

        started = process_cpu()
        await asyncio.gather(*(play(index, game_id) for index, game_id in enumerate(ids)))
        spent = process_cpu() - started
    finally:
        await store.close()
    appended = games * decisions
    return Appends(grouped, spent / appended * 1e6, commits[1] / commits[0] if commits[0] else 0.0)


def run(games: int, moving: int, decisions: int, repeats: int) -> list[Appends]:
    """``repeats`` pairs of measurements, grouped then one by one, each on a new file."""
    found: list[Appends] = []
    with tempfile.TemporaryDirectory(prefix="kutnahora-store-bench-") as folder:
        for repeat in range(repeats):
            for grouped in (True, False):
                way = "together" if grouped else "one by one"
                print(
                    f"store_bench: repeat {repeat + 1} of {repeats}: {games} games × {decisions} decisions, "
                    f"committed {way}…",
                    file=sys.stderr,
                    flush=True,
                )
                name = f"{repeat}-{'grouped' if grouped else 'single'}.db"
                found.append(asyncio.run(measure(Path(folder), name, games, moving, decisions, grouped)))
    return found


def summary(found: Sequence[Appends]) -> dict[str, float]:
    """The medians of each way, and the ratio of the medians (together ÷ one by one)."""
    grouped = [a for a in found if a.grouped]
    single = [a for a in found if not a.grouped]
    together = statistics.median(a.cpu_us for a in grouped)
    alone = statistics.median(a.cpu_us for a in single)
    return {
        "together_cpu_us": together,
        "one_by_one_cpu_us": alone,
        "ratio": together / alone,
        "together_per_commit": statistics.median(a.per_commit for a in grouped),
        "one_by_one_per_commit": statistics.median(a.per_commit for a in single),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.store_bench",
        description="CPU per decision appended to the SQLite store by many games at once: the decisions of "
        "one turn of the event loop committed together, against each committed at once.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=64, help="games appending at once")
    parser.add_argument(
        "--moving", type=int, default=12, help="games appending in each turn of the event loop"
    )
    parser.add_argument("--decisions", type=int, default=200, help="decisions appended by each game")
    parser.add_argument("--repeats", type=int, default=5, help="pairs of measurements (together, one by one)")
    parser.add_argument("--json", type=Path, help="also write the measurements and medians to this file")
    args = parser.parse_args(argv)
    for name in ("games", "moving", "decisions", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    found = run(args.games, args.moving, args.decisions, args.repeats)
    result = summary(found)
    for appends in found:
        way = "together  " if appends.grouped else "one by one"
        print(
            f"  {way}  {appends.cpu_us:6.1f} µs CPU per decision, "
            f"{appends.per_commit:5.1f} decisions a commit"
        )
    print(
        f"medians of {args.repeats}: together {result['together_cpu_us']:.1f} µs, one by one "
        f"{result['one_by_one_cpu_us']:.1f} µs per decision (ratio {result['ratio']:.2f}); "
        f"{result['together_per_commit']:.1f} decisions a commit together"
    )
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": [asdict(a) for a in found], **result}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
