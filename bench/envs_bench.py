"""``kutnahora-envs-bench``: decisions per second through each learning environment, against the bare engine.

Every target plays uniformly random legal decisions in games of the same size, restarting a finished game
with the next seed, on one core (the process is pinned to one CPU unless ``--cpu -1``):

- ``engine``: ``legal`` and ``apply``, nothing else: the ceiling.
- ``engine+observe``: the same, plus the acting seat's observation (through an
  :class:`~kutnahora.engine.Observer`, as the adapters make it), which any agent needs.
- ``vector``: the same, plus the acting seat's observation vector and action mask
  (:mod:`kutnahora.envs.encoding`, :mod:`kutnahora.envs.actions`): the numeric work of the adapters.
- ``pettingzoo``: the AEC environment's ``observe`` (vector and mask) and ``step``.
- ``gymnasium``: the single-agent environment's ``step`` with ``random`` opponents, counted in engine
  decisions (the agent's and the opponents'); the opponents' decisions need no observation.
- ``openspiel``: ``legal_actions`` and ``apply_action`` on the pyspiel state.
- ``openspiel+tensor``: the same, plus the acting player's ``observation_tensor``.

The targets take turns for ``--repeats`` rounds of ``--duration`` seconds each, so that a slower moment of a
shared machine falls on all of them alike; each figure is the median over the rounds, with its range, and
its ratio to the engine's median.

    kutnahora-envs-bench                       # 3 players, 5 rounds of 2 s per target
    kutnahora-envs-bench --players 4 --repeats 7 --duration 3 --json envs.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from kutnahora.engine import GameOptions, Observer, apply, legal, new_game

Runner = Callable[[float], tuple[int, float]]
"""Plays for about the given number of seconds; returns the decisions made and the seconds taken."""


def timed(step: Callable[[], int], batch: int = 100) -> Runner:
    """A runner that calls ``step`` (which returns the decisions it made) in batches until time is up."""

    def run(seconds: float) -> tuple[int, float]:
        decisions = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(batch):
                decisions += step()
            now = time.perf_counter()
            if now >= deadline:
                return decisions, now - start

    return run


def engine_runner(players: int, seed: int, work: str) -> Runner:
    """The bare engine; ``work`` adds ``observe`` or the observation vector and mask of the acting seat."""
    from kutnahora.envs.actions import ActionSpace
    from kutnahora.envs.encoding import ObservationLayout

    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    options = GameOptions(players=players)
    rng = random.Random(seed)
    state = new_game(options, rng.getrandbits(63))
    observer = Observer()

    def step() -> int:
        nonlocal state
        if state.over:
            state = new_game(options, rng.getrandbits(63))
        pending = state.pending
        assert pending is not None
        if work == "observe":
            observer.observe(state, pending.seat)
        elif work == "vector":
            layout.encode(observer.observe(state, pending.seat))
            space.mask(pending.options)
        apply(state, rng.choice(legal(state)))
        return 1

    return timed(step)


def pettingzoo_runner(players: int, seed: int) -> Runner:
    from kutnahora.envs.pettingzoo_env import raw_env

    env = raw_env(players=players)
    env.reset(seed=seed)
    rng = random.Random(seed)

    def step() -> int:
        if env.terminations[env.agent_selection]:
            env.reset()
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        return 1

    return timed(step)


def gymnasium_runner(players: int, seed: int) -> Runner:
    from kutnahora.envs.gymnasium_env import KutnaHoraEnv

    env = KutnaHoraEnv(players=players, opponents="random")
    observation, _ = env.reset(seed=seed)
    rng = random.Random(seed)

    def step() -> int:
        """One agent step, counting the decisions the opponents made in it too."""
        nonlocal observation
        assert env.state is not None
        before = env.state.version
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        observation, _, terminated, _, _ = env.step(action)
        decisions = env.state.version - before
        if terminated:
            observation, _ = env.reset()
        return decisions

    return timed(step, batch=25)


def openspiel_runner(players: int, seed: int, tensor: bool) -> Runner:
    import pyspiel

    import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game

    game = pyspiel.load_game(f"python_kutna_hora(players={players},seed={seed})")
    state = game.new_initial_state()
    rng = random.Random(seed)

    def step() -> int:
        nonlocal state
        if state.is_terminal():
            state = game.new_initial_state()
        if tensor:
            state.observation_tensor(state.current_player())
        state.apply_action(rng.choice(state.legal_actions()))
        return 1

    return timed(step)


TARGETS: dict[str, str] = {
    "engine": "legal + apply",
    "engine+observe": "… + the acting seat's observation",
    "vector": "… + its vector and action mask",
    "pettingzoo": "AEC observe + step",
    "gymnasium": "step, random opponents (all decisions)",
    "openspiel": "legal_actions + apply_action",
    "openspiel+tensor": "… + observation_tensor",
}


def make_runner(target: str, players: int, seed: int) -> Runner:
    """The runner of one target."""
    match target:
        case "engine":
            return engine_runner(players, seed, "")
        case "engine+observe":
            return engine_runner(players, seed, "observe")
        case "vector":
            return engine_runner(players, seed, "vector")
        case "pettingzoo":
            return pettingzoo_runner(players, seed)
        case "gymnasium":
            return gymnasium_runner(players, seed)
        case "openspiel":
            return openspiel_runner(players, seed, tensor=False)
        case "openspiel+tensor":
            return openspiel_runner(players, seed, tensor=True)
    raise ValueError(f"unknown target {target!r}; the targets are {', '.join(TARGETS)}")


@dataclass(frozen=True, slots=True)
class Figure:
    """One target's decisions per second: the median over the rounds, the range, the ratio to the engine."""

    target: str
    step: str
    median: float
    low: float
    high: float
    ratio: float
    rounds: list[float]


def measure(targets: Sequence[str], players: int, duration: float, repeats: int, seed: int) -> list[Figure]:
    """Every target, in turns, ``repeats`` times; the medians."""
    runners = {t: make_runner(t, players, seed) for t in targets}
    for runner in runners.values():
        runner(min(0.3, duration))  # warm-up: imports, caches
    rates: dict[str, list[float]] = {t: [] for t in targets}
    for round_number in range(repeats):
        for target, runner in runners.items():
            steps, seconds = runner(duration)
            rates[target].append(steps / seconds)
        print(f"round {round_number + 1}/{repeats} done", file=sys.stderr, flush=True)
    base = statistics.median(rates["engine"]) if "engine" in rates else float("nan")
    return [
        Figure(
            target=t,
            step=TARGETS[t],
            median=statistics.median(r),
            low=min(r),
            high=max(r),
            ratio=statistics.median(r) / base,
            rounds=r,
        )
        for t, r in rates.items()
    ]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kutnahora-envs-bench",
        description="Decisions per second of the OpenSpiel, PettingZoo and Gymnasium environments against "
        "the bare engine, on one core, random legal play.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=3, help="seats per game")
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per target per round")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (the figures are medians over them)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and of the random choices")
    parser.add_argument(
        "--targets",
        default=",".join(TARGETS),
        help=f"comma-separated targets to measure, of: {', '.join(TARGETS)}",
    )
    parser.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="pin the process to this CPU (default: the first allowed; -1: do not pin)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table."""
    parser = build_parser()
    args = parser.parse_args(argv)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target {', '.join(unknown)}; the targets are {', '.join(TARGETS)}")
    if "engine" not in targets:
        targets.insert(0, "engine")
    if args.duration <= 0 or args.repeats < 1:
        parser.error("--duration must be more than 0 and --repeats at least 1")
    pinned = "not pinned"
    if args.cpu != -1 and hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0)) if args.cpu is None else args.cpu
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError as error:
            parser.error(f"cannot pin the process to CPU {cpu}: {error}")
        pinned = f"pinned to CPU {cpu}"
    total = len(targets) * args.repeats * args.duration
    print(
        f"measuring {len(targets)} targets, {args.players} players, {args.repeats} rounds of "
        f"{args.duration:g} s each ({pinned}); about {total:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    figures = measure(targets, args.players, args.duration, args.repeats, args.seed)
    print(
        f"{args.players} players, random legal play, one core; decisions per second, median of {args.repeats}"
    )
    print(f"{'target':<18} {'a decision is':<40} {'median':>9} {'range':>19} {'vs engine':>10}")
    for f in figures:
        spread = f"{f.low:,.0f}–{f.high:,.0f}"
        print(f"{f.target:<18} {f.step:<40} {f.median:>9,.0f} {spread:>19} {f.ratio:>9.2f}×")
    if args.json:
        data = {"players": args.players, "duration": args.duration, "repeats": args.repeats}
        args.json.write_text(json.dumps({**data, "figures": [asdict(f) for f in figures]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
