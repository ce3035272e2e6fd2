"""The strength ladder: a round-robin of the built-in bots, the neural bot among them, played in process.

Every game is played with the engine as a library (no server, no wire), each bot deciding from its
seat's observation; a decision with one legal option is played without asking. At two players every pair
of bots meets ``--games`` times, seats alternating; at four players each game seats four different bots
(the line-ups cycle through every choice of four, in a seeded order, seats shuffled). The tables give,
per player count, each bot's games, wins (a game is won by a sole or shared first place, by points then
groschen), the win rate with its Wilson 95 % interval, the openskill rating (Plackett-Luce, μ − 3σ, as
the tournament runner computes it, :mod:`kutnahora.clients.tournament.stats`), and the CPU time per
decision (process time of the decisions with two or more options); at two players also each pair's
head-to-head record::

    python -m kutnahora.envs.ladder --games 4 --games4 14
    python -m kutnahora.envs.ladder --bots neural:300,mcts:100 --games 100 --players 2
    python -m kutnahora.envs.ladder --bots neural --field greedy --players 4 --games4 400

``--workers N`` plays N games at once in N processes (one per core): the same games, seeds and records
as one process plays, each bot's CPU time measured in the process that plays it. ``--json`` writes every
game and both tables (after every game, the games kept in order: one finished ahead of an unfinished
earlier one is written with it), and ``--resume`` goes on from that file after a stop, replaying none of
its games; ``--weights`` plays ``neural`` and ``neural:N`` with another
weights file, such as a training run's ``latest.npz``, and ``--guide`` plays ``neural-mcts`` with another
guide. Bots are named as everywhere (``mcts:100``, ``neural:300``, ``neural:150ms``, ``neural-mcts:110``).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.pool import AsyncResult
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kutnahora.clients.bots import is_bot, make_bot
from kutnahora.clients.bots.neural import NeuralBot
from kutnahora.clients.files import write_json
from kutnahora.clients.stopping import INTERRUPTED, exit_with_parent, terminate_as_interrupt
from kutnahora.clients.tournament.results import GameRecord
from kutnahora.clients.tournament.stats import standings, wilson
from kutnahora.engine import GameOptions, GameState, Option, apply, new_game, observe
from kutnahora.engine.scoring import winners

DEFAULT_BOTS = "random,greedy,mcts:25,mcts:100,mcts:400,neural,neural:300,neural-mcts:110"

SeatPlayer = Callable[[GameState, int], Option]


Networks = Mapping[str, Path]
"""Other weights files than the shipped ones: ``"policy"`` for ``neural`` and ``neural:N`` (``--weights``),
``"guide"`` for ``neural-mcts`` (``--guide``); a bot whose key is missing plays the shipped one."""

SHIPPED: Networks = MappingProxyType({})
"""The shipped networks for every neural bot."""


def seat_player(name: str, seed: int, networks: Networks = SHIPPED) -> SeatPlayer:
    """A built-in bot deciding in process: from the engine's observation when it reads one (``mcts``,
    ``neural``), else from the wire observation the server would send (``greedy``, ``random``)."""
    bot = make_bot(name, seed)
    weights = (
        networks.get("policy" if bot.candidates is None else "guide") if isinstance(bot, NeuralBot) else None
    )
    if isinstance(bot, NeuralBot) and weights is not None:
        bot = NeuralBot(
            seed,
            bot.simulations,
            bot.budget_ms,
            weights=weights,
            candidates=bot.candidates,
            others=bot.others,
        )
    decide = getattr(bot, "decide", None)
    if decide is not None:
        return lambda state, seat: decide(observe(state, seat))
    from kutnahora.envs.opponents import BotOpponent, started_once

    return started_once(BotOpponent(bot))


@dataclass
class Clock:
    """CPU time and decisions, per bot."""

    seconds: dict[str, float] = field(default_factory=dict)
    decisions: dict[str, int] = field(default_factory=dict)

    def ms_per_decision(self, bot: str) -> float:
        """Mean CPU milliseconds per decision (NaN before any)."""
        count = self.decisions.get(bot, 0)
        return 1000 * self.seconds.get(bot, 0.0) / count if count else float("nan")

    def to_json(self) -> dict[str, dict[str, float]]:
        """Each bot's CPU seconds and decisions so far, as the report keeps them for ``--resume``."""
        return {bot: {"seconds": self.seconds[bot], "decisions": self.decisions[bot]} for bot in self.seconds}

    @classmethod
    def from_json(cls, data: dict[str, dict[str, float]]) -> Clock:
        """The clock a report kept."""
        return cls(
            {bot: float(v["seconds"]) for bot, v in data.items()},
            {bot: int(v["decisions"]) for bot, v in data.items()},
        )


def play(
    bots: Sequence[str], seed: int, index: int, clock: Clock, networks: Networks = SHIPPED
) -> GameRecord:
    """One game, seat ``s`` played by ``bots[s]`` (the neural bots with ``networks``); its record (scores,
    winners, decisions, seconds)."""
    players = [seat_player(name, seed * 10 + seat, networks) for seat, name in enumerate(bots)]
    state = new_game(GameOptions(players=len(bots)), seed)
    decisions = 0
    started = time.perf_counter()
    while state.pending is not None:
        options = state.pending.options
        seat = state.pending.seat
        if len(options) == 1:
            apply(state, options[0])
            continue
        name = bots[seat]
        before = time.process_time()
        option = players[seat](state, seat)
        spent = time.process_time() - before
        clock.seconds[name] = clock.seconds.get(name, 0.0) + spent
        clock.decisions[name] = clock.decisions.get(name, 0) + 1
        decisions += 1
        apply(state, option)
    return GameRecord(
        index=index,
        game_id=f"ladder-{index}",
        seed=seed,
        bots=list(bots),
        scores=[p.points for p in state.players],
        winners=list(winners(state)),
        status="finished",
        replay=None,
        groschen=[p.groschen for p in state.players],
        decisions=decisions,
        seconds=time.perf_counter() - started,
    )


def play_alone(bots: Sequence[str], seed: int, index: int, networks: Networks) -> tuple[GameRecord, Clock]:
    """:func:`play` in a worker process: the record and the game's own clock, to be added to the ladder's."""
    clock = Clock()
    return play(bots, seed, index, clock, networks), clock


def add_clock(total: Clock, part: Clock) -> None:
    """Add a game's CPU seconds and decisions to the ladder's clock."""
    for bot, seconds in part.seconds.items():
        total.seconds[bot] = total.seconds.get(bot, 0.0) + seconds
        total.decisions[bot] = total.decisions.get(bot, 0) + part.decisions[bot]


def play_in_order(
    lineups: Sequence[Sequence[str]],
    first: int,
    seed_of: Callable[[int], int],
    networks: Networks,
    workers: int,
) -> Iterator[tuple[GameRecord, Clock]]:
    """The games ``first`` onwards of ``lineups``, in order, each with its own clock: in this process, or
    ``workers`` at once in worker processes (as many games under way as workers; a game finished ahead of
    an earlier one waits for it, so what is yielded is always every game up to one)."""
    if workers <= 1:
        for index in range(first, len(lineups)):
            yield play_alone(lineups[index], seed_of(index), index, networks)
        return
    context = multiprocessing.get_context("spawn")  # a clean interpreter: no state, locks or threads shared
    pool = context.Pool(workers, initializer=exit_with_parent, initargs=(os.getpid(),))
    try:
        under_way: dict[int, AsyncResult[tuple[GameRecord, Clock]]] = {}
        following = first
        for index in range(first, len(lineups)):
            while len(under_way) < workers and following < len(lineups):
                task = (list(lineups[following]), seed_of(following), following, dict(networks))
                under_way[following] = pool.apply_async(play_alone, task)
                following += 1
            yield under_way.pop(index).get()
    finally:
        pool.terminate()  # a stop ends the games under way at once (a pool's shutdown would finish them)
        pool.join()


def schedule(
    bots: Sequence[str], players: int, games: int, seed: int, field: str | None = None
) -> list[list[str]]:
    """The line-ups: at two players every pair ``games`` times, seats alternating; at more, ``games``
    games of distinct bots cycling through the combinations in a seeded order, seats shuffled. With a
    ``field`` bot, each of the others plays ``games`` games alone against it in every other seat, its
    own seat rotating."""
    rng = random.Random(seed)
    if field is not None:
        return [
            [bot if seat == k % players else field for seat in range(players)]
            for bot in bots
            if bot != field
            for k in range(games)
        ]
    if players == 2:
        return [
            [a, b] if k % 2 == 0 else [b, a] for a, b in itertools.combinations(bots, 2) for k in range(games)
        ]
    if len(bots) < players:
        return []
    combos = list(itertools.combinations(bots, players))
    rng.shuffle(combos)
    lineups = []
    for k in range(games):
        lineup = list(combos[k % len(combos)])
        rng.shuffle(lineup)
        lineups.append(lineup)
    return lineups


def standings_table(
    bots: Sequence[str], records: Sequence[GameRecord], clock: Clock, title: str
) -> tuple[Table, list[dict[str, Any]]]:
    """Each bot's line: games, wins, win rate and interval, rating, CPU per decision."""
    table = Table(title=title, box=box.SIMPLE_HEAD, title_style="bold", padding=(0, 1))
    for heading in ("Bot", "Games", "Wins", "Win %", "95% CI", "Rating", "μ ± σ", "CPU ms/decision"):
        table.add_column(heading, justify="left" if heading == "Bot" else "right", no_wrap=True)
    rows = []
    for entry in standings(bots, records):
        low, high = entry.interval
        ms = clock.ms_per_decision(entry.bot)
        table.add_row(
            entry.bot,
            str(entry.games),
            str(entry.wins),
            f"{entry.win_rate:.1%}",
            f"{low:.0%}–{high:.0%}",
            f"{entry.rating:.1f}",
            f"{entry.mu:.1f}±{entry.sigma:.1f}",
            "-" if math.isnan(ms) else f"{ms:.1f}",
        )
        rows.append({**entry.to_json(), "cpu_ms_per_decision": None if math.isnan(ms) else round(ms, 2)})
    return table, rows


def head_to_head(bots: Sequence[str], records: Sequence[GameRecord]) -> tuple[Table, list[dict[str, Any]]]:
    """At two players, each pair's record: wins of each, ties, and the first's win rate with ties as
    half (Wilson interval)."""
    table = Table(title="Head to head, two players", box=box.SIMPLE_HEAD, title_style="bold")
    for heading in ("Bot A", "Bot B", "Games", "A wins", "B wins", "Ties", "A's score", "95% CI"):
        table.add_column(heading, justify="left" if heading.startswith("Bot") else "right", no_wrap=True)
    rows = []
    for a, b in itertools.combinations(bots, 2):
        games = [r for r in records if sorted(r.bots) == sorted([a, b]) and a != b]
        if not games:
            continue
        a_wins = sum(1 for r in games if r.winners == [r.bots.index(a)])
        b_wins = sum(1 for r in games if r.winners == [r.bots.index(b)])
        ties = len(games) - a_wins - b_wins
        score = a_wins + ties / 2
        low, high = wilson(round(score), len(games))
        table.add_row(
            a,
            b,
            str(len(games)),
            str(a_wins),
            str(b_wins),
            str(ties),
            f"{score / len(games):.1%}",
            f"{low:.0%}–{high:.0%}",
        )
        rows.append(
            {
                "a": a,
                "b": b,
                "games": len(games),
                "a_wins": a_wins,
                "b_wins": b_wins,
                "ties": ties,
                "a_score": round(score / len(games), 4),
                "a_score_ci95": [round(low, 4), round(high, 4)],
            }
        )
    return table, rows


def summary(bots: Sequence[str], players: int, records: Sequence[GameRecord], clock: Clock) -> dict[str, Any]:
    """The figures of one player count so far: standings, head to head (two players), every game."""
    part: dict[str, Any] = {"games": len(records), "standings": standings_table(bots, records, clock, "")[1]}
    if players == 2:
        part["head_to_head"] = head_to_head(bots, records)[1]
    part["records"] = [r.to_json() for r in records]
    part["clock"] = clock.to_json()
    part["median_game_seconds"] = round(statistics.median(r.seconds for r in records), 2) if records else 0
    return part


def by_players(bots: Sequence[str], done: Mapping[int, tuple[list[GameRecord], Clock]]) -> dict[str, Any]:
    """The report's ``by_players``: the :func:`summary` of every player count with a game played."""
    return {str(p): summary(bots, p, records, clock) for p, (records, clock) in done.items() if records}


def game_seed(seed: int, players: int, index: int) -> int:
    """The seed of game ``index`` at ``players`` players of a ladder seeded ``seed``."""
    return seed * 100_000 + players * 10_000 + index


def resumed(
    path: Path | None, report: dict[str, Any], plans: dict[int, list[list[str]]]
) -> dict[int, tuple[list[GameRecord], Clock]]:
    """The games and clocks an earlier run wrote to ``path``, per player count, after checking that it
    played the same bots, seed and options and that every kept game is the one this run would play
    (``ValueError`` saying what differs, otherwise)."""
    if path is None:
        raise ValueError("--resume goes on from the --json file of an earlier run: give --json")
    try:
        earlier = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"--resume: {path} does not exist (nothing to go on from)") from None
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"--resume: {path} cannot be read as a ladder report: {error}") from None
    for key in ("bots", "seed", "options"):
        if earlier.get(key) != report[key]:
            raise ValueError(
                f"--resume: {path} was played with {key} {earlier.get(key)!r}, not {report[key]!r}; "
                "give the same options, or another --json file"
            )
    done: dict[int, tuple[list[GameRecord], Clock]] = {}
    for players, lineups in plans.items():
        part = earlier.get("by_players", {}).get(str(players))
        if not part:
            continue
        records = [GameRecord.from_json(r) for r in part["records"]]
        for index, record in enumerate(records):
            if (
                index >= len(lineups)
                or record.bots != lineups[index]
                or record.seed != game_seed(report["seed"], players, index)
            ):
                raise ValueError(f"--resume: game {index} of {path} at {players} players is not this run's")
        done[players] = (records, Clock.from_json(part["clock"]))
    report["date"] = earlier["date"]
    report["resumed"] = [*earlier.get("resumed", []), datetime.now(UTC).isoformat(timespec="seconds")]
    return done


def main(argv: Sequence[str] | None = None) -> int:
    """Play the ladder and print its tables."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.envs.ladder",
        description="A round-robin of built-in bots in process, at two and four players: openskill ratings, "
        "win rates with Wilson intervals, CPU per decision.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--bots", default=DEFAULT_BOTS, help="comma-separated bot names")
    parser.add_argument("--players", default="2,4", help="player counts to play, comma-separated")
    parser.add_argument("--games", type=int, default=4, help="games per pair of bots at two players")
    parser.add_argument("--games4", type=int, default=14, help="games at three or four players")
    parser.add_argument(
        "--field",
        help="instead of a round-robin, each bot alone against this bot in every other seat (its seat "
        "rotating): --bots neural --field greedy --players 4 is one neural seat against three greedy",
    )
    parser.add_argument(
        "--weights",
        type=Path,
        help="neural and neural:N play with this weights file instead of the shipped neural.npz",
    )
    parser.add_argument(
        "--guide", type=Path, help="neural-mcts searches with this guide instead of the shipped guide.npz"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and line-ups")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="games played at once, each in a process of its own (one per core); the same games and records",
    )
    parser.add_argument("--json", type=Path, help="write every game and the tables to this file")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on from the --json file of an earlier run with the same options: its games are kept, "
        "the rest played",
    )
    args = parser.parse_args(argv)
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    if args.field:
        bots = [b for b in bots if b != args.field] + [args.field]
    unknown = [b for b in bots if not is_bot(b)]
    if unknown or len(set(bots)) != len(bots) or len(bots) < 2:
        parser.error(
            f"--bots wants two or more different built-in bots; unknown: {', '.join(unknown) or '-'}"
        )
    try:
        counts = [int(p) for p in args.players.split(",")]
    except ValueError:
        counts = []
    if not counts or any(p not in (2, 3, 4) for p in counts):
        parser.error("--players wants counts among 2, 3 and 4, comma-separated")
    if args.games < 1 or args.games4 < 0 or args.workers < 1:
        parser.error("--games and --workers must be at least 1 and --games4 at least 0")
    if args.json and args.json.exists() and not args.resume:
        parser.error(f"{args.json} exists: --resume to go on from it, or give another --json file")
    networks = {k: v for k, v in (("policy", args.weights), ("guide", args.guide)) if v is not None}
    for name in bots:
        try:
            seat_player(name, 0, networks)  # a missing or unreadable weights file fails here, before any game
        except (OSError, ValueError) as error:
            parser.error(f"{name} cannot play: {error}")
    console = Console(width=None if sys.stdout.isatty() else 120)
    options = {
        "players": counts,
        "games": args.games,
        "games4": args.games4,
        "field": args.field,
        "weights": str(args.weights) if args.weights else None,
        "guide": str(args.guide) if args.guide else None,
    }
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "bots": bots,
        "seed": args.seed,
        "options": options,
        "by_players": {},
    }
    plans = {
        p: schedule(bots, p, args.games if p == 2 else args.games4, args.seed + p, args.field) for p in counts
    }
    done: dict[int, tuple[list[GameRecord], Clock]] = {}
    if args.resume:
        try:
            done = resumed(args.json, report, plans)
        except ValueError as error:
            parser.error(str(error))
        report["by_players"] = by_players(bots, done)
    try:
        with (
            terminate_as_interrupt(),
            Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            ) as progress,
        ):
            for players, lineups in plans.items():
                records, clock = done.setdefault(players, ([], Clock()))
                task = progress.add_task(f"{players} players", total=len(lineups), completed=len(records))
                seed_of = functools.partial(game_seed, args.seed, players)
                for record, spent in play_in_order(lineups, len(records), seed_of, networks, args.workers):
                    records.append(record)
                    add_clock(clock, spent)
                    progress.advance(task)
                    report["by_players"][str(players)] = summary(bots, players, records, clock)
                    if args.json:  # after every game, so a long ladder can be read while it plays
                        write_json(args.json, report)
                title = f"{players} players, {len(records)} games"
                progress.console.print(standings_table(bots, records, clock, title)[0])
                if players == 2:
                    progress.console.print(head_to_head(bots, records)[0])
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: every finished game is in the report already
        played = sum(len(records) for records, _ in done.values())
        if args.json:  # a game may have ended between its record and the report's writing
            report["by_players"] = by_players(bots, done)
            write_json(args.json, report)
        kept = f"all in {args.json}; --resume goes on" if args.json else "not kept without --json"
        print(f"stopped with {played:,} games played, {kept}", file=sys.stderr)
        return INTERRUPTED
    if args.json:
        write_json(args.json, report)
        console.print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
