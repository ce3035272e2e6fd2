"""``kutnahora-envs-bench``: decisions per second through each learning environment, over whole games.

Every target plays uniformly random legal decisions in whole games of the same size, each game from the
next seed of one sequence (equal seeds deal equal games wherever a target deals from a seed), on one core
(the process is pinned to one CPU unless ``--cpu -1``):

- ``engine``: ``legal`` and ``apply``, nothing else: the ceiling.
- ``engine+observe``: the same, plus the acting seat's observation (through an
  :class:`~kutnahora.engine.Observer`, as the adapters make it): the floor of any adapter that observes,
  and the figure the adapters are compared with.
- ``vector``: the bare engine plus the acting seat's observation vector, written straight from the
  engine's state as the adapters write it (:class:`~kutnahora.learned.state_encoding.StateEncoder`, no
  observation made), and its action mask (:mod:`kutnahora.learned.actions`): the numeric work of the adapters.
- ``pettingzoo``: the AEC environment's ``agent_iter`` loop: ``last`` (observation and mask) and ``step``.
- ``gymnasium``: the single-agent environment's ``step`` with ``random`` opponents, counted in engine
  decisions (the agent's and the opponents'); only the agent's decisions are observed.
- ``openspiel``: ``legal_actions`` and ``apply_action`` on the pyspiel state.
- ``openspiel+tensor``: the same, plus the acting player's ``observation_tensor``.

Every target is measured on each engine of ``--engines`` (default: the pure engine, and the native core
when it is built), in the same run: the environments are made with ``KUTNAHORA_ENGINE`` set to each
(:mod:`kutnahora.envs.stepping`), ``engine`` and ``vector`` use :class:`~kutnahora.native.game.NativeGame`
and the core's own observation vector (``engine+observe``, the engine's observations, is the pure
engine's only). The table gives each engine's median and the native core's ratio to the pure engine's.

The targets take turns for ``--repeats`` rounds; in a round each target plays whole games until
``--duration`` seconds have passed (the game under way is finished; seconds of the process's CPU time by
default, ``--clock wall`` for elapsed time), so that every figure covers the
setup, the middle and the end of games alike and a slower moment of a shared machine falls on all targets.
Each figure is the median over the rounds, with its range, its ratio to ``engine+observe``'s median and
to the bare engine's (both the pure engine's).

    kutnahora-envs-bench                       # 3 players, 7 rounds of 2 s per target
    kutnahora-envs-bench --players 4 --repeats 9 --duration 3 --json envs.json
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
from kutnahora.native import ENGINE_VARIABLE, NATIVE, PYTHON, native_available

Game = Callable[[int], int]
"""Plays one whole game from the given seed; returns the decisions made in it."""
Runner = Callable[[float], tuple[int, float]]
"""Plays whole games for at least the given number of seconds; returns the decisions and the seconds."""


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
"""``cpu``: the process's CPU time, what the work costs (a shared machine's waits left out); ``wall``."""


def timed(play: Game, seed: int, clock: Callable[[], float] = time.process_time) -> Runner:
    """A runner that plays whole games, each from the next seed, until the time is up on ``clock``."""
    seeds = random.Random(seed)

    def run(seconds: float) -> tuple[int, float]:
        decisions = 0
        start = clock()
        deadline = start + seconds
        while True:
            decisions += play(seeds.getrandbits(31))
            now = clock()
            if now >= deadline:
                return decisions, now - start

    return run


def engine_game(players: int, work: str) -> Game:
    """The bare engine; ``work`` adds ``observe``, or the observation vector and mask of the acting seat."""
    from kutnahora.learned.actions import ActionSpace
    from kutnahora.learned.encoding import ObservationLayout
    from kutnahora.learned.state_encoding import StateEncoder

    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    encoder = StateEncoder(layout)
    options = GameOptions(players=players)
    observer = Observer()

    def play(seed: int) -> int:
        rng = random.Random(seed)
        state = new_game(options, random.Random(seed).getrandbits(63))
        decisions = 0
        while not state.over:
            pending = state.pending
            assert pending is not None
            if work == "observe":
                observer.observe(state, pending.seat)
            elif work == "vector":
                encoder.encode(state, pending.seat)
                space.mask(pending.options)
            apply(state, rng.choice(legal(state)))
            decisions += 1
        return decisions

    return play


def native_game(players: int, work: str) -> Game:
    """The native core: ``legal`` and ``apply`` from Python; ``work`` adds the vector and the action ids."""
    from kutnahora.envs.stepping import CoreStepper
    from kutnahora.learned.actions import ActionSpace
    from kutnahora.learned.encoding import ObservationLayout

    layout = ObservationLayout()
    steps = CoreStepper(layout, ActionSpace(layout.components))
    options = GameOptions(players=players)

    def play(seed: int) -> int:
        rng = random.Random(seed)
        game = steps.new(options, random.Random(seed).getrandbits(63))
        core = game.game
        decisions = 0
        while not game.over:
            if work == "vector":
                game.vector(game.seat)
                game.ids()
                game.apply(rng.randrange(len(game.ids())))
            else:
                core.apply_index(rng.randrange(core.legal_count()))
            decisions += 1
        return decisions

    return play


def pettingzoo_game(players: int) -> Game:
    """PettingZoo's documented loop: ``agent_iter``, ``last``, a legal action from the mask, ``step``."""
    from kutnahora.envs.pettingzoo_env import raw_env

    env = raw_env(players=players)

    def play(seed: int) -> int:
        env.reset(seed=seed)
        rng = random.Random(seed)
        decisions = 0
        for _ in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            decisions += 1
        return decisions

    return play


def gymnasium_game(players: int) -> Game:
    """Gymnasium's loop against ``random`` opponents, counting their decisions too."""
    from kutnahora.envs.gymnasium_env import KutnaHoraEnv

    env = KutnaHoraEnv(players=players, opponents="random")

    def play(seed: int) -> int:
        observation, _ = env.reset(seed=seed)
        rng = random.Random(seed)
        terminated = False
        while not terminated:
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            observation, _, terminated, _, _ = env.step(action)
        assert env.game is not None
        return env.game.version

    return play


def openspiel_game(players: int, tensor: bool, seed: int) -> Game:
    """pyspiel's loop: ``legal_actions`` and ``apply_action``, with the acting player's tensor or not.

    One game object deals every game, from its own sequence (the game string's ``seed``).
    """
    import pyspiel

    import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game

    game = pyspiel.load_game(f"python_kutna_hora(players={players},seed={seed})")

    def play(seed: int) -> int:
        state = game.new_initial_state()
        rng = random.Random(seed)
        decisions = 0
        while not state.is_terminal():
            if tensor:
                state.observation_tensor(state.current_player())
            state.apply_action(rng.choice(state.legal_actions()))
            decisions += 1
        return decisions

    return play


ENGINES = (PYTHON, NATIVE)
PYTHON_ONLY = ("engine+observe",)
"""Targets measured on the pure engine only: the engine's observations, which the core does not make."""

TARGETS: dict[str, str] = {
    "engine": "legal + apply",
    "engine+observe": "… + the acting seat's observation",
    "vector": "legal + apply + vector and action mask",
    "pettingzoo": "agent_iter: last + step",
    "gymnasium": "step, random opponents (all decisions)",
    "openspiel": "legal_actions + apply_action",
    "openspiel+tensor": "… + observation_tensor",
}
FLOOR = "engine+observe"
"""The target the adapters are compared with: the engine and the observation every adapter makes."""


def make_runner(target: str, players: int, seed: int, clock: str = "cpu", engine: str = PYTHON) -> Runner:
    """The runner of one target on one engine (the environments are made with ``KUTNAHORA_ENGINE`` set to
    it, and keep the engine they were made with)."""
    before = os.environ.get(ENGINE_VARIABLE)
    os.environ[ENGINE_VARIABLE] = engine
    try:
        return _make_runner(target, players, seed, clock, engine)
    finally:
        if before is None:
            del os.environ[ENGINE_VARIABLE]
        else:
            os.environ[ENGINE_VARIABLE] = before


def _make_runner(target: str, players: int, seed: int, clock: str, engine: str) -> Runner:
    match target:
        case "engine" if engine == NATIVE:
            play = native_game(players, "")
        case "vector" if engine == NATIVE:
            play = native_game(players, "vector")
        case _ if engine == NATIVE and target in PYTHON_ONLY:
            raise ValueError(f"{target} is measured on the pure engine only")
        case "engine":
            play = engine_game(players, "")
        case "engine+observe":
            play = engine_game(players, "observe")
        case "vector":
            play = engine_game(players, "vector")
        case "pettingzoo":
            play = pettingzoo_game(players)
        case "gymnasium":
            play = gymnasium_game(players)
        case "openspiel":
            play = openspiel_game(players, False, seed)
        case "openspiel+tensor":
            play = openspiel_game(players, True, seed)
        case _:
            raise ValueError(f"unknown target {target!r}; the targets are {', '.join(TARGETS)}")
    return timed(play, seed, CLOCKS[clock])


@dataclass(frozen=True, slots=True)
class Figure:
    """One target's decisions per second on one engine: the median over the rounds, the range, ratios."""

    target: str
    engine: str
    step: str
    median: float
    low: float
    high: float
    ratio: float
    """To the median of ``engine+observe`` (the pure engine's)."""
    engine_ratio: float
    """To the median of the bare pure engine."""
    native_ratio: float | None
    """For the native core's figure: its median over the pure engine's median of the same target."""
    rounds: list[float]


def measure(
    targets: Sequence[str],
    players: int,
    duration: float,
    repeats: int,
    seed: int,
    clock: str = "cpu",
    engines: Sequence[str] = (PYTHON,),
) -> list[Figure]:
    """Every target on every engine, in turns, ``repeats`` times, in whole games; the medians."""
    runners = {
        (t, e): make_runner(t, players, seed, clock, e)
        for t in targets
        for e in engines
        if e == PYTHON or t not in PYTHON_ONLY
    }
    for runner in runners.values():
        runner(0.0)  # warm-up: one game (imports, caches)
    rates: dict[tuple[str, str], list[float]] = {key: [] for key in runners}
    for round_number in range(repeats):
        for key, runner in runners.items():
            steps, seconds = runner(duration)
            rates[key].append(steps / seconds)
        print(f"round {round_number + 1}/{repeats} done", file=sys.stderr, flush=True)
    medians = {key: statistics.median(r) for key, r in rates.items()}
    floor = medians.get((FLOOR, PYTHON), float("nan"))
    engine = medians.get(("engine", PYTHON), float("nan"))
    figures = []
    for (t, e), r in rates.items():
        python = medians.get((t, PYTHON))
        figures.append(
            Figure(
                target=t,
                engine=e,
                step=TARGETS[t],
                median=medians[(t, e)],
                low=min(r),
                high=max(r),
                ratio=medians[(t, e)] / floor,
                engine_ratio=medians[(t, e)] / engine,
                native_ratio=medians[(t, e)] / python if e == NATIVE and python else None,
                rounds=r,
            )
        )
    return figures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kutnahora-envs-bench",
        description="Decisions per second of the OpenSpiel, PettingZoo and Gymnasium environments over "
        "whole games of random legal play, on one core, against the engine with observations (the floor of "
        "any adapter that observes) and the bare engine.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=3, help="seats per game")
    parser.add_argument(
        "--duration", type=float, default=2.0, help="seconds of whole games per target per round"
    )
    parser.add_argument("--repeats", type=int, default=7, help="rounds (the figures are medians over them)")
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
    parser.add_argument(
        "--clock",
        choices=tuple(CLOCKS),
        default="cpu",
        help="cpu: the process's CPU time (steady on a shared machine); wall: elapsed time",
    )
    parser.add_argument(
        "--engines",
        default=None,
        help="comma-separated engines to measure each target on, of: python, native "
        "(default: both when the native core is built, else python)",
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
    for needed in reversed(("engine", FLOOR)):
        if needed not in targets:
            targets.insert(0, needed)
    if args.engines is None:
        engines = list(ENGINES) if native_available() else [PYTHON]
    else:
        engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not engines or any(e not in ENGINES for e in engines):
        parser.error(f"--engines takes python and native, not {args.engines!r}")
    if NATIVE in engines and not native_available():
        parser.error("the native core is not built (pip install ./native/core): use --engines python")
    if PYTHON not in engines:
        engines.insert(0, PYTHON)  # the pure engine's figures are the ones every ratio is taken against
    if args.duration < 0 or args.repeats < 1:
        parser.error("--duration must be 0 or more (0: one game per round) and --repeats at least 1")
    pinned = "not pinned"
    if args.cpu != -1 and hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0)) if args.cpu is None else args.cpu
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError as error:
            parser.error(f"cannot pin the process to CPU {cpu}: {error}")
        pinned = f"pinned to CPU {cpu}"
    total = len(targets) * len(engines) * args.repeats * args.duration
    print(
        f"measuring {len(targets)} targets on {', '.join(engines)}, {args.players} players, "
        f"{args.repeats} rounds of {args.duration:g} s each ({pinned}); about {total:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    figures = measure(targets, args.players, args.duration, args.repeats, args.seed, args.clock, engines)
    print(
        f"{args.players} players, random legal play in whole games, one core; decisions per second "
        f"({args.clock} time), median of {args.repeats} rounds"
    )
    header = f"{'target':<18} {'engine':<7} {'a decision is':<40} {'median':>9} {'range':>19}"
    print(f"{header} {'vs ' + FLOOR:>18} {'vs engine':>10} {'native/python':>14}")
    for f in sorted(figures, key=lambda f: (targets.index(f.target), ENGINES.index(f.engine))):
        spread = f"{f.low:,.0f}–{f.high:,.0f}"
        native = "" if f.native_ratio is None else f"{f.native_ratio:.2f}×"
        print(
            f"{f.target:<18} {f.engine:<7} {f.step:<40} {f.median:>9,.0f} {spread:>19} {f.ratio:>17.2f}× "
            f"{f.engine_ratio:>9.2f}× {native:>14}"
        )
    if args.json:
        data = {"players": args.players, "duration": args.duration, "repeats": args.repeats}
        data["clock"] = args.clock
        data["engines"] = engines
        args.json.write_text(json.dumps({**data, "figures": [asdict(f) for f in figures]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
