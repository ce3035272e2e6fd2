"""What the engine's search operations cost: clone, copy, apply, legal options, observe, resample.

A search clones a state for every simulation and resamples hidden information from an observation, so
those costs are set beside the cost of one ``apply``, each measured over the same positions of seeded
random games, in one run::

    python -m kutnahora.bench.engine_bench --players 4 --positions 300

Each figure is the median over several repeats of the mean time per position; the ratios are to apply.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from kutnahora.engine import (
    GameOptions,
    GameState,
    Option,
    apply,
    clone,
    legal,
    new_game,
    observe,
    resample,
)


def sample_positions(players: int, count: int, seed: int) -> list[tuple[GameState, Option]]:
    """``count`` positions of seeded random games with the random option played next, spread over games."""
    found: list[tuple[GameState, Option]] = []
    game = 0
    while len(found) < count:
        state = new_game(GameOptions(players=players), seed + game)
        rng = random.Random(seed + game)
        while not state.over and len(found) < count:
            option = rng.choice(legal(state))
            if rng.random() < 0.1:
                found.append((state.copy(), option))
            apply(state, option)
        game += 1
    return found


def per_position(run: Callable[[], None], count: int, repeats: int) -> float:
    """The median over ``repeats`` of the mean seconds per position of ``run`` (which does all of them)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) / count)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the cost of each operation in microseconds and as a multiple of one apply."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.engine_bench",
        description="Measure clone, copy, apply, legal, observe and resample over positions of random games.",
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=4, help="seats per game (4)")
    parser.add_argument("--positions", type=int, default=300, help="positions measured (300)")
    parser.add_argument("--repeats", type=int, default=7, help="repeats; the median is shown (7)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (1)")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.repeats < 1:
        parser.error("--positions and --repeats must be at least 1")
    positions = sample_positions(args.players, args.positions, args.seed)
    states = [state for state, _ in positions]
    observations = [observe(state, state.pending.seat if state.pending else 0) for state in states]
    clones = [clone(state) for state in states]

    def do_apply() -> None:
        for (_, option), state in zip(positions, clones, strict=True):
            apply(state, option)

    def do_clone() -> None:
        for state in states:
            clone(state)

    def do_copy() -> None:
        for state in states:
            state.copy()

    def do_legal() -> None:
        for state in states:
            legal(state)

    def do_observe() -> None:
        for state in states:
            observe(state, 0)

    rng = random.Random(args.seed)

    def do_resample() -> None:
        for observation in observations:
            resample(observation, rng)

    # apply changes its states, so each repeat applies to fresh clones made outside the timing
    apply_times = []
    for _ in range(args.repeats):
        clones[:] = [clone(state) for state in states]
        apply_times.append(per_position(do_apply, len(states), 1))
    apply_cost = statistics.median(apply_times)
    costs = {
        "apply (one decision, with the next legal options)": apply_cost,
        "clone": per_position(do_clone, len(states), args.repeats),
        "copy (deepcopy)": per_position(do_copy, len(states), args.repeats),
        "legal": per_position(do_legal, len(states), args.repeats),
        "observe": per_position(do_observe, len(states), args.repeats),
        "resample": per_position(do_resample, len(states), args.repeats),
    }
    print(f"{len(states)} positions of {args.players}-player random games, median of {args.repeats} repeats")
    for name, seconds in costs.items():
        print(f"  {name:<52} {seconds * 1e6:9.1f} µs  {seconds / apply_cost:6.2f}× apply")
    return 0


if __name__ == "__main__":
    sys.exit(main())
