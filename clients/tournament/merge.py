"""``kutnahora-tournament merge``: join the results files of a tournament's shards into one.

A tournament split with ``--shard K/N`` (shard K plays the game indices i with i % N == K; the schedule
is a pure function of the seed and the index) leaves N results files. Merging checks that they are the
same tournament (bots, players, games, seed, events), that no game index appears twice and that every
index is there, then writes one results file whose table and rating run, in game-index order, are those
of a single run with the same seed.

Example::

    kutnahora-tournament merge --out results.json shard-0.json shard-1.json --csv table.csv
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from kutnahora.clients.tournament import results, stats
from kutnahora.clients.tournament.results import GameRecord, ResultsError
from kutnahora.clients.tournament.schedule import split_copies

SAME = ("bots", "players", "games", "seed", "events", "bot_commands", "submissions")


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` as (K, N), with 0 <= K < N; ValueError with a sentence otherwise."""
    part, sep, total = text.partition("/")
    if not sep or not part.strip().isdigit() or not total.strip().isdigit():
        raise ValueError(f"--shard wants K/N (for example 0/4), not {text!r}")
    index, count = int(part), int(total)
    if count < 1 or index >= count:
        raise ValueError(f"--shard {text}: K must be 0 to N-1 and N at least 1")
    return index, count


def merge(paths: Sequence[Path]) -> tuple[dict[str, Any], list[GameRecord], list[int]]:
    """The merged configuration, the records in index order and the game indices no shard played."""
    if not paths:
        raise ResultsError("merge needs at least one results file")
    config: dict[str, Any] | None = None
    records: dict[int, GameRecord] = {}
    for path in paths:
        saved, found = results.load(path)
        if config is None:
            config = saved
        for key in SAME:
            if saved.get(key) != config.get(key):
                raise ResultsError(
                    f"{path} is another tournament: {key}={saved.get(key)!r}, not {config.get(key)!r} as in "
                    f"{paths[0]}"
                )
        for record in found:
            if record.index in records:
                raise ResultsError(f"game {record.index} is in more than one file (again in {path})")
            records[record.index] = record
    assert config is not None
    merged = {k: v for k, v in config.items() if k != "shard"}
    missing = [i for i in range(int(merged.get("games", 0))) if i not in records]
    return merged, [records[i] for i in sorted(records)], missing


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kutnahora-tournament merge",
        description="Join the results files of a tournament's shards (--shard K/N) into one results "
        "file, table and rating run, in game-index order.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("shards", nargs="+", type=Path, help="the shards' results files")
    parser.add_argument("--out", type=Path, required=True, help="the merged results file to write")
    parser.add_argument("--csv", type=Path, help="write the standings table as CSV here")
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kutnahora-tournament merge``."""
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    try:
        config, records, missing = merge(args.shards)
    except ResultsError as error:
        print(f"kutnahora-tournament merge: {error}.", file=sys.stderr)
        return 2
    names = list(dict.fromkeys(split_copies(n)[0] for n in config.get("bots", [])))
    entries = stats.standings(names, records)
    servers = sorted({json.loads(p.read_text(encoding="utf-8")).get("server", "") for p in args.shards})
    results.save(
        args.out, config, ", ".join(s for s in servers if s), records, [s.to_json() for s in entries]
    )
    if args.csv is not None:
        stats.write_csv(args.csv, entries)
    title = f"{config.get('players')}-player tournament, {len(records)} games, seed {config.get('seed')}"
    console.print(stats.table(entries, title))
    console.print(f"Merged {len(records)} games from {len(args.shards)} file(s) into {args.out}.")
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        console.print(f"{len(missing)} game(s) are in no file: {shown}")
        return 1
    return 0
