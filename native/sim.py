"""``kutnahora-sim``: play complete games with uniformly random legal decisions, in-process.

The engine's smoke test and benchmark at once: it reports games finished, errors, decisions, and the
rates per second on one core. ``--json`` prints one JSON object for scripts.

The games are played by the engine ``KUTNAHORA_ENGINE`` selects (:func:`kutnahora.native.active_engine`):
the native core when it is built, else this pure-Python engine. Both deal and play the same games from
the same seeds, so the decisions, scores and win shares printed are the same; only the rates differ.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence

from kutnahora.engine.component_file import ComponentError, default_components, load_components
from kutnahora.engine.components import ComponentSet
from kutnahora.engine.game import GameResult, apply, legal, new_game, result
from kutnahora.engine.state import GameOptions
from kutnahora.native import NATIVE, EngineUnavailable, active_engine

GamePlayer = Callable[[GameOptions, int, ComponentSet, random.Random], tuple[int, GameResult | None]]
"""Plays one game with random legal decisions: (decisions made, result)."""


def play_python(
    options: GameOptions, seed: int, components: ComponentSet, chooser: random.Random
) -> tuple[int, GameResult | None]:
    """One game in the pure-Python engine."""
    state = new_game(options, seed, components)
    decisions = 0
    while not state.over:
        options_now = legal(state)
        apply(state, options_now[chooser.randrange(len(options_now))])
        decisions += 1
    return decisions, result(state)


def play_native(
    options: GameOptions, seed: int, components: ComponentSet, chooser: random.Random
) -> tuple[int, GameResult | None]:
    """The same game in the native core: the same options in the same order, so the same choices."""
    from kutnahora.native.game import NativeGame

    game = NativeGame.new(options, seed, components)
    decisions = 0
    while not game.over:
        game.apply_index(chooser.randrange(game.legal_count()))
        decisions += 1
    return decisions, game.result()


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-sim",
        description="Play complete Kutná Hora games with random legal decisions and summarise them.",
    )
    parser.add_argument(
        "--players", type=int, choices=(2, 3, 4), default=4, help="seats per game (default 4)"
    )
    parser.add_argument("--games", type=int, default=100, help="how many games to play (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game; game i uses seed+i")
    parser.add_argument("--events", action="store_true", help="use event cards with three or four players")
    parser.add_argument(
        "--components", metavar="FILE", help="a component data file instead of the default set"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the simulation; exit status 1 when any game raised an error."""
    args = build_parser().parse_args(argv)
    if args.games < 1:
        print("kutnahora-sim: --games must be at least 1", file=sys.stderr)
        return 2
    try:
        components = load_components(args.components) if args.components else default_components()
    except ComponentError as error:
        print(f"kutnahora-sim: {args.components} is not a valid component file: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"kutnahora-sim: cannot read {args.components}: {error.strerror or error}", file=sys.stderr)
        return 2
    try:
        engine = active_engine()
    except EngineUnavailable as error:
        print(f"kutnahora-sim: {error}", file=sys.stderr)
        return 2
    play: GamePlayer = play_native if engine == NATIVE else play_python
    options = GameOptions(players=args.players, events=args.events)
    finished = errors = decisions = 0
    wins = [0.0] * args.players
    scores: list[int] = []
    first_error = ""
    started = time.perf_counter()
    cpu_started = time.process_time()
    progress = _Progress(args.games) if sys.stderr.isatty() else None
    for index in range(args.games):
        if progress is not None:
            progress.show(index)
        seed = args.seed + index
        chooser = random.Random(seed ^ 0x5EED)
        try:
            played, outcome = play(options, seed, components, chooser)
            decisions += played
            assert outcome is not None
            finished += 1
            scores.extend(outcome.scores)
            for seat in outcome.winners:
                wins[seat] += 1 / len(outcome.winners)
        except Exception:  # a broken game is counted and reported, and the run goes on
            errors += 1
            if not first_error:
                first_error = f"seed {seed}: {traceback.format_exc()}"
    elapsed = time.perf_counter() - started
    # on a machine shared with other work, the CPU time this process used says what one core does
    cpu = max(time.process_time() - cpu_started, 1e-9)
    if progress is not None:
        progress.clear()
    report = {
        "engine": engine,
        "players": args.players,
        "games": args.games,
        "finished": finished,
        "errors": errors,
        "decisions": decisions,
        "seconds": round(elapsed, 6),
        "games_per_second": round(args.games / elapsed, 2),
        "decisions_per_second": round(decisions / elapsed, 1),
        "cpu_seconds": round(cpu, 6),
        "games_per_cpu_second": round(args.games / cpu, 2),
        "decisions_per_game": round(decisions / args.games, 1),
        "mean_score": round(sum(scores) / len(scores), 2) if scores else None,
        "win_share_by_seat": [round(w / args.games, 3) for w in wins],
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"{finished}/{args.games} games of {args.players} players finished, {errors} errors "
            f"({engine} engine)"
        )
        print(
            f"{decisions} decisions, {report['decisions_per_game']} a game, mean score {report['mean_score']}"
        )
        print(
            f"{report['games_per_second']} games/s, {report['decisions_per_second']} decisions/s "
            f"({report['games_per_cpu_second']} games per CPU second)"
        )
        print("win share by seat: " + ", ".join(f"{w:.1%}" for w in report["win_share_by_seat"]))
    if first_error:
        print(f"first error, {first_error}", file=sys.stderr)
    return 1 if errors else 0


class _Progress:
    """A line on a terminal's stderr saying how many games are done, redrawn at most twice a second."""

    def __init__(self, games: int) -> None:
        self.games = games
        self.shown_at = float("-inf")  # the first game shows the line at once

    def show(self, done: int) -> None:
        now = time.perf_counter()
        if now - self.shown_at >= 0.5:
            self.shown_at = now
            print(f"\rkutnahora-sim: {done}/{self.games} games…", end="", file=sys.stderr, flush=True)

    def clear(self) -> None:
        print("\r\033[K", end="", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
