"""The rules engine's share of the game server's CPU per decision, and what the native core could gain there.

``python -m kutnahora.bench.engine_share`` starts a game server (as ``kutnahora-bench`` starts it: SQLite,
no clock, no rate limit) with the engine's calls on the decision path wrapped in timers of the thread's
CPU time, drives it with ``kutnahora-bench``'s load (every seat of many games over its own Play stream,
random listed options), and reads, over the measured seconds, the server process's CPU (every thread:
gRPC's, the store's, the event loop's) and each timed part's, per decision:

- **the decision** (what the native core does): ``engine.owed`` and ``listed_option`` (whose turn, which
  option the answer names; ``engine.check`` for an answer given as an option), and ``engine.apply``, which
  also lists the next decision's options;
- **the observation's engine part**: the engine's redacted view (``Observer.observe``) and the rules
  queries the served observation asks (the options' costs, the card halves left out, the open mine squares
  and plots, the options' descriptions);
- **the observation** whole (:func:`kutnahora.wire.seat_observation.encode_observation`: the above and the
  wire encoding).

Then it measures, in this process, how much faster the core plays the decision (random games, legal and
apply, :mod:`kutnahora.bench.envs_bench`'s ``engine`` target on both engines) and gives the most the core
could take off the server's CPU per decision: the decision's share × (1 − 1/speed-up). A compiled build
(setup.py) calls the observer and the pricing from compiled code, past the wrappers: run it on the pure
Python package.

    python -m kutnahora.bench.engine_share                      # 64 games, 15 s after 3 s of warm-up
    python -m kutnahora.bench.engine_share --games 16 --duration 5 --json share.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import Any

DECISION = ("owed", "check", "listed_option", "apply")
"""The decision's timed parts (the engine's calls in ``LiveGame.submit``)."""
VIEW = ("observe", "option_costs", "unavailable_actions", "describe_option", "mine_squares", "plot_squares")
"""The observation's engine parts (the observer and the rules queries of the served observation)."""
OBSERVATION = "encode_observation"
"""The served observation, whole."""
SNAPSHOT_SECONDS = 0.2


Totals = dict[str, list[int]]
"""Per timed part: [calls, nanoseconds of thread CPU]."""


def timed(totals: Totals, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, counting its calls and the thread CPU they take in ``totals[name]``."""
    slot = totals.setdefault(name, [0, 0])
    clock = time.thread_time_ns

    @wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return function(*args, **kwargs)
        finally:
            slot[0] += 1
            slot[1] += clock() - started

    return call


def install(totals: Totals) -> None:
    """Wrap the engine's calls on the server's decision path, where the server looks them up."""
    import kutnahora.engine as engine
    import kutnahora.server.feed as feed
    import kutnahora.server.game as game
    import kutnahora.wire.seat_observation as served
    from kutnahora.engine import Observer

    for name in ("owed", "check", "apply"):
        setattr(engine, name, timed(totals, name, getattr(engine, name)))
    for module, name in ((game, "listed_option"), (feed, OBSERVATION)):
        setattr(module, name, timed(totals, name, getattr(module, name)))
    Observer.observe = timed(totals, "observe", Observer.observe)  # type: ignore[method-assign]
    for name in VIEW[1:]:
        setattr(served, name, timed(totals, name, getattr(served, name)))


def serve(snapshots: Path, argv: Sequence[str]) -> None:
    """Run the server (``argv``: its arguments) with the engine's calls timed; every 0.2 s write the totals
    with the process's CPU seconds, taken together, to ``snapshots``."""
    totals: Totals = {}
    install(totals)

    def write() -> None:
        while True:
            time.sleep(SNAPSHOT_SECONDS)
            spent = os.times()
            snapshot = {"cpu": spent.user + spent.system, "totals": totals}
            partial = snapshots.with_suffix(".partial")
            partial.write_text(json.dumps(snapshot))
            partial.replace(snapshots)

    threading.Thread(target=write, daemon=True).start()
    from kutnahora.server.main import main

    raise SystemExit(main(list(argv)))


def read_snapshot(path: Path, after: float) -> dict[str, Any]:
    """The first snapshot written after the moment ``after`` (``time.time()``)."""
    deadline = time.time() + 30
    while time.time() < deadline:
        if path.exists() and path.stat().st_mtime > after:
            try:
                found: dict[str, Any] = json.loads(path.read_text())
                return found
            except json.JSONDecodeError:
                pass
        time.sleep(SNAPSHOT_SECONDS / 4)
    raise SystemExit(f"the server wrote no snapshot to {path} for 30 s")


def shares(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per decision between two snapshots: the server's CPU, each part's and each group's, in µs."""
    decisions: int = after["totals"]["apply"][0] - before["totals"]["apply"][0]
    if decisions <= 0:
        raise SystemExit("the server applied no decision in the measured time")

    def spent(name: str) -> float:
        start: int = before["totals"].get(name, [0, 0])[1]
        end: int = after["totals"].get(name, [0, 0])[1]
        return (end - start) / 1e3 / decisions

    total = (after["cpu"] - before["cpu"]) * 1e6 / decisions
    parts = {name: spent(name) for name in (*DECISION, *VIEW, OBSERVATION)}
    decision = sum(parts[n] for n in DECISION)
    view = sum(parts[n] for n in VIEW)
    return {
        "decisions": decisions,
        "server_us": total,
        "parts_us": parts,
        "decision_us": decision,
        "view_us": view,
        "observation_us": parts[OBSERVATION],
        "decision_share": decision / total,
        "view_share": view / total,
        "wire_share": (parts[OBSERVATION] - view) / total,
    }


def core_speedup(players: int, seconds: float, repeats: int) -> tuple[float, float, float]:
    """Decisions per CPU second of random games on the engine and on the core (legal and apply), medians
    of ``repeats`` alternated rounds; and their ratio."""
    from kutnahora.bench.envs_bench import engine_game, native_game
    from kutnahora.bench.envs_bench import timed as runner

    engine, core = runner(engine_game(players, ""), 1), runner(native_game(players, ""), 1)
    rates: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for run, into in ((engine, rates[0]), (core, rates[1])):
            steps, spent = run(seconds)
            into.append(steps / spent)
    slow, fast = statistics.median(rates[0]), statistics.median(rates[1])
    return slow, fast, fast / slow


def measure(games: int, warmup: float, duration: float) -> dict[str, Any]:
    """Start the timed server, drive it, stop it; the per-decision figures of the measured seconds."""
    from kutnahora.bench.server_bench import Load, measure_games, server_command, start_process

    with tempfile.TemporaryDirectory() as folder:
        snapshots = Path(folder) / "totals.json"
        command = server_command(str(Path(folder) / "bench.db"), max(1000, games * 4))
        assert command[1:3] == ["-m", "kutnahora.server.main"]
        started = start_process(
            [sys.executable, "-m", "kutnahora.bench.engine_share", "--serve", str(snapshots), *command[3:]]
        )
        try:

            async def drive() -> tuple[dict[str, Any], dict[str, Any]]:
                load = Load(games, (2, 3, 4), warmup, duration, 4)
                playing = asyncio.create_task(measure_games(f"127.0.0.1:{started.port}", load))
                await asyncio.sleep(warmup)
                before = await asyncio.to_thread(read_snapshot, snapshots, time.time())
                await asyncio.sleep(duration)
                after = await asyncio.to_thread(read_snapshot, snapshots, time.time())
                await playing
                return before, after

            before, after = asyncio.run(drive())
        finally:
            started.process.terminate()
            started.process.wait(30)
    return shares(before, after)


def report(figures: dict[str, Any]) -> None:
    """Print the figures."""
    total = figures["server_us"]
    print(f"server CPU per decision {total:.0f} µs, over {figures['decisions']} decisions (every thread)")
    for name, us in figures["parts_us"].items():
        print(f"  {name:<20} {us:7.1f} µs  {us / total:6.1%}")
    print(
        f"the decision (owed, listed option, apply)    {figures['decision_us']:6.1f} µs  "
        f"{figures['decision_share']:.1%}\n"
        f"the observation's engine part (view, rules)  {figures['view_us']:6.1f} µs  "
        f"{figures['view_share']:.1%}\n"
        f"the observation's wire encoding              "
        f"{figures['observation_us'] - figures['view_us']:6.1f} µs  {figures['wire_share']:.1%}"
    )
    if "core_speedup" in figures:
        print(
            f"legal + apply in random games: engine {figures['engine_rate']:,.0f}, core "
            f"{figures['core_rate']:,.0f} decisions per CPU second ({figures['core_speedup']:.1f}×)\n"
            f"the most the core could take off the server's CPU per decision: "
            f"{figures['decision_share']:.1%} × (1 − 1/{figures['core_speedup']:.1f}) = {figures['gain']:.1%}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print (``--serve`` is the server process the measurement starts)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["--serve"]:
        serve(Path(arguments[1]), arguments[2:])
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.engine_share",
        description="The rules engine's share of the game server's CPU per decision under kutnahora-bench's "
        "load, and the most the native core could take off it.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=64, help="games played at once")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--duration", type=float, default=15.0, help="seconds measured")
    parser.add_argument(
        "--core-seconds", type=float, default=1.0, help="seconds per round of the engine-against-core rounds"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(arguments)
    if args.games < 1 or args.duration <= 0 or args.warmup < 0:
        parser.error("--games must be at least 1, --duration more than 0 and --warmup 0 or more")
    import kutnahora
    from kutnahora.native import native_available

    if "kutnahora.wire.seat_observation" in kutnahora.compiled_modules():
        parser.error(
            "the served observation runs compiled here, past the timers: use the pure Python package"
        )
    figures = measure(args.games, args.warmup, args.duration)
    if native_available():
        slow, fast, ratio = core_speedup(3, args.core_seconds, 3)
        gain = figures["decision_share"] * (1 - 1 / ratio)
        figures.update(engine_rate=slow, core_rate=fast, core_speedup=ratio, gain=gain)
    report(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
