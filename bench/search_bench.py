"""How long the search bot takes to decide, per iteration budget: wall-clock and CPU time per decision.

Positions are taken from seeded random games (decisions with at least two options, owed by the seat
searching); each is searched with the bot's own code, and the median, the 90th percentile and the
maximum are printed for each budget::

    python -m kutnahora.bench.search_bench --players 2 --iterations 30,100 --positions 40

CPU time is what one core spent; on a shared machine the wall-clock time also counts the other work.

With the native rules core built (kutnahora.native), every budget is measured with the rollouts in each
engine (``--engines python,native``, the default then), in the same run: the decisions must be the same
(the same seed, the same choices), and the ratio of the median CPU times is printed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence

from kutnahora.clients.bots.mcts import search
from kutnahora.engine import GameOptions, Observation, Option, apply, legal, new_game, observe
from kutnahora.native import NATIVE, PYTHON, native_available


def positions(players: int, count: int, seed: int) -> list[Observation]:
    """Observations of the seat owing a decision of two or more options, spread over seeded random games."""
    found: list[Observation] = []
    game = 0
    while len(found) < count:
        state = new_game(GameOptions(players=players), seed + game)
        rng = random.Random(seed + game)
        while not state.over and len(found) < count:
            options = legal(state)
            if len(options) > 1 and state.pending is not None and rng.random() < 0.08:
                found.append(observe(state, state.pending.seat))
            apply(state, rng.choice(options))
        game += 1
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Print the time per decision for each iteration budget."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.search_bench",
        description="Time the mcts bot's search per decision, for iteration budgets, on random positions.",
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="seats per game (2)")
    parser.add_argument("--iterations", default="30,100", help="comma-separated budgets (30,100)")
    parser.add_argument("--positions", type=int, default=40, help="positions searched per budget (40)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (1)")
    parser.add_argument(
        "--engines",
        default=f"{PYTHON},{NATIVE}" if native_available() else PYTHON,
        help="the engines that play the rollouts, compared (python,native when the core is built)",
    )
    args = parser.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not engines or not set(engines) <= {PYTHON, NATIVE}:
        parser.error("--engines names python, native or both")
    if NATIVE in engines and not native_available():
        parser.error("the native rules core is not built (pip install ./native/core)")
    try:
        budgets = [int(b) for b in args.iterations.split(",") if b.strip()]
    except ValueError:
        parser.error("--iterations wants comma-separated whole numbers, such as 30,100")
    if not budgets or min(budgets) < 1 or args.positions < 1:
        parser.error("budgets and --positions must be at least 1")
    observations = positions(args.players, args.positions, args.seed)
    print(f"{len(observations)} positions of {args.players}-player random games")
    for budget in budgets:
        medians: dict[str, float] = {}
        chosen: dict[str, list[Option]] = {}
        for engine in engines:
            walls, cpus = [], []
            chosen[engine] = []
            for index, observation in enumerate(observations):
                wall, cpu = time.perf_counter(), time.process_time()
                found = search(observation, random.Random(index), iterations=budget, engine=engine)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
                chosen[engine].append(found.option)
            medians[engine] = statistics.median(cpus)
            for name, values in (("wall", walls), ("cpu", cpus)):
                ordered = sorted(values)
                p90 = ordered[int(0.9 * (len(ordered) - 1))]
                print(
                    f"  {budget:>5} iterations, {engine:<6} {name:<4}: median "
                    f"{statistics.median(values) * 1000:7.1f} ms, "
                    f"90% {p90 * 1000:7.1f} ms, max {ordered[-1] * 1000:7.1f} ms a decision"
                )
        if len(engines) > 1:
            first, second = engines[0], engines[1]
            same = sum(a == b for a, b in zip(chosen[first], chosen[second], strict=True))
            print(
                f"  {budget:>5} iterations: {same} of {len(observations)} decisions the same; median CPU "
                f"{first} / {second}: x{medians[first] / max(medians[second], 1e-9):.1f}"
            )
            if same != len(observations):
                print("search_bench: the engines chose differently", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
