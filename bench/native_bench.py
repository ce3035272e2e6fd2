"""The native rules core against the pure engine, measured in the same run: games, apply and clone.

Every figure is CPU time of this process (one core), random legal options from seeded games:

- ``python``: the engine, ``legal`` and ``apply`` (what ``kutnahora-sim`` does);
- ``native (driven from Python)``: :class:`~kutnahora.native.game.NativeGame`, an option chosen in Python
  for every decision (``legal_count`` and ``apply_index``), as a search's rollout loop written in Python;
- ``native (in C++)``: whole games played inside the core (``kutnahora_core.random_games``);
- ``apply`` and ``clone``: microseconds a call, mid-game (clone from Python, the core's object and the
  engine's state).

``--differential N`` first plays N more games in lock-step through both engines and compares every
decision's legal options, the whole state and the events, and every game's result (as tests/native
does; every third game with the event cards, which two players always use); ``--perturbed N`` plays N
more, each changed in the middle in the engine (:func:`perturb`: groschen, reputation, pelicans, the tax)
and handed to the core, which must play on as the engine does. ``--no-speed`` stops after them::

    python -m kutnahora.bench.native_bench                     # 4 players
    python -m kutnahora.bench.native_bench --players 3 --differential 1000 --json native.json
    python -m kutnahora.bench.native_bench --players 2 --differential 500 --perturbed 500 --no-speed
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from kutnahora.engine import (
    DecisionKind,
    GameOptions,
    GameState,
    apply,
    default_components,
    legal,
    new_game,
    result,
)
from kutnahora.engine.options import PendingDecision
from kutnahora.engine.posing import pending_options
from kutnahora.native import EngineUnavailable, core_module


def _cpu(work: Callable[[], int]) -> tuple[float, int]:
    started = time.process_time()
    count = work()
    return max(time.process_time() - started, 1e-9), count


def python_games(options: GameOptions, seeds: range) -> int:
    """Random games in the engine; returns the decisions made."""
    decisions = 0
    for seed in seeds:
        state = new_game(options, seed)
        chooser = random.Random(seed ^ 0x5EED)
        while not state.over:
            moves = legal(state)
            apply(state, moves[chooser.randrange(len(moves))])
            decisions += 1
    return decisions


def native_games(options: GameOptions, seeds: range) -> int:
    """Random games in the core, each option chosen in Python; returns the decisions made."""
    from kutnahora.native.game import NativeGame

    decisions = 0
    for seed in seeds:
        game = NativeGame.new(options, seed)
        chooser = random.Random(seed ^ 0x5EED)
        while not game.over:
            game.apply_index(chooser.randrange(game.legal_count()))
            decisions += 1
    return decisions


def differential(options: GameOptions, seeds: range) -> int:
    """Lock-step games through both engines, the event cards in every third; returns the decisions
    compared. Raises AssertionError on the first difference."""
    decisions = 0
    for seed in seeds:
        dealt = GameOptions(players=options.players, events=seed % 3 == 0)
        decisions += lockstep(new_game(dealt, seed), random.Random(seed))
    return decisions


def perturbed(options: GameOptions, seeds: range) -> tuple[int, int]:
    """Lock-step games each changed in the middle: played some way in the engine alone (to a card play
    after a random number of decisions, up to 40 a seat), :func:`perturb`-ed, then handed to the core and
    played on in lock-step; returns the games that were (a game that ends before its card play is not)
    and the decisions compared. Raises AssertionError on the first difference."""
    games = decisions = 0
    for seed in seeds:
        state = new_game(GameOptions(players=options.players, events=seed % 2 == 0), seed)
        chooser = random.Random(seed)
        target = chooser.randrange(8, 40 * options.players)
        while state.pending is not None and (
            state.version < target or state.pending.kind is not DecisionKind.PLAY_CARD
        ):
            moves = legal(state)
            apply(state, moves[chooser.randrange(len(moves))])
        if state.over:
            continue
        perturb(state, chooser)
        decisions += lockstep(state, chooser)
        games += 1
    return games, decisions


def perturb(state: GameState, chooser: random.Random) -> None:
    """Move a game somewhere random play seldom goes: rich or broke seats, reputation at the track's ends,
    pelicans to spend, a high tax; the pending decision is posed again from the changed state."""
    for player in state.players:
        player.groschen = chooser.choice((0, 1, 3, player.groschen, 40, 90))
        player.reputation = chooser.choice((-5, -4, 2, 3, 6, 9, player.reputation))
        player.pelicans += chooser.randrange(3)
    state.tax = chooser.choice((state.tax, 6, 15))
    pending = state.pending
    assert pending is not None
    state.pending = PendingDecision(
        pending.seat, pending.kind, pending_options(state, pending.seat, pending.kind)
    )


def lockstep(state: GameState, chooser: random.Random) -> int:
    """Play ``state`` to its end in the engine and, from a copy, in the core, with random options chosen
    by ``chooser``, comparing every decision's legal options, the whole state and the events, and the
    result; returns the decisions compared. Raises AssertionError on the first difference."""
    from kutnahora.native.convert import from_state
    from kutnahora.native.game import NativeGame

    game = NativeGame.from_state(state) if state.version else NativeGame.new(state.options, state.seed)
    seed = state.seed
    decisions = 0
    while True:
        moves = legal(state)
        if game.legal() != moves or game._game.dump() != from_state(state):
            raise AssertionError(f"seed {seed}: the engines differ at decision {state.version}")
        if not moves:
            break
        option = moves[chooser.randrange(len(moves))]
        if game.apply(option) != apply(state, option):
            raise AssertionError(f"seed {seed}: the events differ at decision {state.version}")
        decisions += 1
    if game.result() != result(state):
        raise AssertionError(f"seed {seed}: the results differ")
    return decisions


def _mid_game(options: GameOptions, seed: int, decisions: int) -> Any:
    state = new_game(options, seed)
    chooser = random.Random(seed)
    for _ in range(decisions):
        moves = legal(state)
        apply(state, moves[chooser.randrange(len(moves))])
    return state


def clone_micros(options: GameOptions, calls: int) -> dict[str, float]:
    """Microseconds a clone of a mid-game state: the engine's, the core's object, the core's game."""
    from kutnahora.native.game import NativeGame

    state = _mid_game(options, 11, 60)
    game = NativeGame.from_state(state)
    core_game = game._game
    figures: dict[str, float] = {}
    for name, make in (
        ("python", state.clone),
        ("native", game.clone),
        ("native core object", core_game.clone),
    ):
        started = time.process_time()
        for _ in range(calls):
            make()
        figures[name] = max(time.process_time() - started, 1e-9) / calls * 1e6
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.native_bench",
        description="The native rules core against the pure engine: games per CPU second, apply and clone.",
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=4)
    parser.add_argument("--python-games", type=int, default=100, help="games in the engine (default 100)")
    parser.add_argument("--native-games", type=int, default=20000, help="games in the core (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="the first game's seed")
    parser.add_argument("--differential", type=int, default=0, metavar="N", help="lock-step games first")
    parser.add_argument(
        "--perturbed", type=int, default=0, metavar="N", help="lock-step games changed in the middle first"
    )
    parser.add_argument("--no-speed", action="store_true", help="only the lock-step games, no speed figures")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    args = parser.parse_args(argv)
    try:
        core = core_module()
    except EngineUnavailable as error:
        print(f"native_bench: {error}", file=sys.stderr)
        return 2
    from kutnahora.native.game import core_components

    options = GameOptions(players=args.players)
    report: dict[str, Any] = {"players": args.players}
    if args.differential:
        seconds, compared = _cpu(
            lambda: differential(options, range(args.seed, args.seed + args.differential))
        )
        report["differential"] = {"games": args.differential, "decisions": compared}
        print(
            f"differential: {args.differential} games, {compared} decisions, the same ({seconds:.1f} CPU s)"
        )
    if args.perturbed:
        first = args.seed + args.differential
        started = time.process_time()
        played, compared = perturbed(options, range(first, first + args.perturbed))
        seconds = time.process_time() - started
        report["perturbed"] = {"games": args.perturbed, "played": played, "decisions": compared}
        print(
            f"perturbed: {args.perturbed} games ({played} changed and played on; the others ended before "
            f"their change), {compared} decisions, the same ({seconds:.1f} CPU s)"
        )
    if args.no_speed:
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(report, out, indent=2)
        return 0
    py_seconds, py_decisions = _cpu(
        lambda: python_games(options, range(args.seed, args.seed + args.python_games))
    )
    driven = max(args.python_games * 10, 100)
    nd_seconds, nd_decisions = _cpu(lambda: native_games(options, range(args.seed, args.seed + driven)))
    table = core_components(default_components(), args.players)
    nc_seconds, nc_decisions = _cpu(
        lambda: int(core.random_games(table, args.seed, args.native_games, 7, False)[0])
    )
    rows = [
        ("python", args.python_games, py_seconds, py_decisions),
        ("native (driven from Python)", driven, nd_seconds, nd_decisions),
        ("native (in C++)", args.native_games, nc_seconds, nc_decisions),
    ]
    base = args.python_games / py_seconds
    report["games"] = {}
    print(f"{args.players}-player random games, CPU time of one core:")
    for name, games, seconds, decisions in rows:
        rate = games / seconds
        apply_us = seconds / decisions * 1e6
        report["games"][name] = {
            "games": games,
            "games_per_cpu_second": round(rate, 1),
            "decisions_per_game": round(decisions / games, 1),
            "us_per_decision": round(apply_us, 3),
            "ratio": round(rate / base, 1),
        }
        print(
            f"  {name:28} {rate:10.1f} games/CPU s  {apply_us:8.2f} us a decision (legal + apply)"
            f"  x{rate / base:.1f}"
        )
    clones = clone_micros(options, 20000)
    report["clone_us"] = {name: round(us, 3) for name, us in clones.items()}
    print("clone of a mid-game state: " + ", ".join(f"{name} {us:.2f} us" for name, us in clones.items()))
    print(f"  ratio python / native: x{clones['python'] / clones['native']:.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
