"""The server's CPU per decision without the network: where a decision's time goes inside the process.

Games are played through the server's own objects, as ``game_memory`` plays them: a
:class:`~kutnahora.server.hub.GameHub` over a SQLite store in a temporary file, every seat answering with
a random listed option. Many games are played in turn, one decision each, so that each game's data has
left the processor's caches by its next turn, as in a busy server. Before each decision the observation
of the seat that owes it is built, as a Play stream's writer does. Each decision's thread CPU is split
into that observation and the submit (storing the decision, applying it, the history, the clock and the
metrics), and inside them into the engine's observer, the pricing of the options (their costs and the
card halves left out), the store's insert and the engine's apply. A finished game is replaced by a new
one. In a compiled build (setup.py) the served observation calls the observer and the pricing from
compiled code, where they cannot be wrapped, so there the observation is timed whole.

    python -m kutnahora.bench.hub_cpu --games 64 --decisions 10000 --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kutnahora
from kutnahora import engine
from kutnahora.bench.hub_games import joined_game, sqlite_hub
from kutnahora.engine import view as engine_view
from kutnahora.plumbing import logs
from kutnahora.server.feed import feed as feed_of
from kutnahora.server.game import LiveGame
from kutnahora.server.records import ListedIndex
from kutnahora.wire import seat_observation

WARMUP = 2000
"""Decisions played before measuring, so that the caches every game shares are filled."""


@dataclass
class HubCpu:
    """Microseconds of thread CPU per decision: in all, and by part."""

    decisions: int
    total_us: float
    observation_us: float
    observer_us: float  # the engine's share of the observation
    submit_us: float
    pricing_us: float = 0.0  # the options' costs and the card halves left out, inside the observation
    store_us: float = 0.0  # the store's insert, inside the submit
    apply_us: float = 0.0  # the engine's apply, inside the submit


PARTS = ("observer", "pricing", "store", "apply")
"""The parts timed inside a decision, each the thread CPU of the calls :func:`_parts_timed` wraps."""


def observation_split() -> bool:
    """Whether the observation's parts can be timed: not when the served observation runs compiled, since
    compiled code calls the observer and the pricing directly, past any wrapper."""
    return "kutnahora.wire.seat_observation" not in kutnahora.compiled_modules()


@contextmanager
def _timed(spent: dict[str, float], part: str, owner: object, name: str) -> Iterator[None]:
    """While inside, count the thread CPU of every call of ``owner.name`` (a function or a coroutine
    function) into ``spent[part]``."""
    original = getattr(owner, name)
    own = name in vars(owner)  # a module's or a class's own attribute, not an instance's bound method
    if asyncio.iscoroutinefunction(original):

        async def timed_coroutine(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return await original(*args, **kwargs)
            finally:
                spent[part] += time.thread_time() - started

        setattr(owner, name, timed_coroutine)
    else:

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent[part] += time.thread_time() - started

        setattr(owner, name, timed)
    try:
        yield
    finally:
        if own:
            setattr(owner, name, original)
        else:  # an instance's bound method: drop the override, and the class's method shows again
            delattr(owner, name)


@contextmanager
def _parts_timed(spent: dict[str, float], store: object) -> Iterator[None]:
    """Time the parts of :data:`PARTS` into ``spent``: the engine's observer, the options' pricing (as the
    served observation calls it), the store's insert (on ``store``) and the engine's apply (as the game
    calls it)."""
    with ExitStack() as stack:
        if observation_split():
            stack.enter_context(_timed(spent, "observer", engine_view.Observer, "observe"))
            stack.enter_context(_timed(spent, "pricing", seat_observation, "option_costs"))
            stack.enter_context(_timed(spent, "pricing", seat_observation, "unavailable_actions"))
        stack.enter_context(_timed(spent, "store", store, "append_decision"))
        stack.enter_context(_timed(spent, "apply", engine, "apply"))
        yield


async def _run(games: int, decisions: int, seed: int, folder: Path) -> HubCpu:
    hub = sqlite_hub(folder, "cpu.db")
    await hub.store.open()
    rng = random.Random(seed)
    created = 0

    async def new_game() -> LiveGame:
        nonlocal created
        players, game_seed = 2 + created % 3, seed + created
        created += 1
        return await joined_game(hub, players, game_seed)

    playing = [await new_game() for _ in range(games)]
    turn = 0

    async def play(count: int) -> tuple[float, float]:
        """Play ``count`` decisions, the games in turn; the thread CPU of their observations and submits."""
        nonlocal turn
        observation = submit = 0.0
        made = 0
        while made < count:
            index = turn % games
            turn += 1
            game = playing[index]
            pending = game.state.pending
            if pending is None or game.ended:
                playing[index] = await new_game()
                continue
            started = time.thread_time()
            feed_of(game).observation(pending.seat)
            observed = time.thread_time()
            await game.submit(pending.seat, game.version, ListedIndex(rng.randrange(len(pending.options))))
            observation += observed - started
            submit += time.thread_time() - observed
            made += 1
        return observation, submit

    spent = dict.fromkeys(PARTS, 0.0)
    with _parts_timed(spent, hub.store):
        await play(WARMUP)
        spent.update(dict.fromkeys(PARTS, 0.0))
        measured_from = time.thread_time()
        observation, submit = await play(decisions)
        total = time.thread_time() - measured_from
    await hub.store.close()
    scale = 1e6 / decisions
    return HubCpu(
        decisions,
        total * scale,
        observation * scale,
        spent["observer"] * scale,
        submit * scale,
        pricing_us=spent["pricing"] * scale,
        store_us=spent["store"] * scale,
        apply_us=spent["apply"] * scale,
    )


def measure(games: int = 64, decisions: int = 10_000, seed: int = 1) -> HubCpu:
    """Play ``decisions`` decisions (after a warm-up) over ``games`` games in turn and time them."""
    logs.configure("json", "error")
    try:
        with tempfile.TemporaryDirectory() as folder:
            return asyncio.run(_run(games, decisions, seed, Path(folder)))
    finally:
        logs.reset()


def main(argv: Sequence[str] | None = None) -> int:
    """Print the CPU per decision and its parts, for each repeat and their medians."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.hub_cpu",
        description="Measure the server's CPU per decision in process, through the hub, and where it goes.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=64, help="games played in turn (2, 3 and 4 seats)")
    parser.add_argument("--decisions", type=int, default=10_000, help="decisions measured in each repeat")
    parser.add_argument("--repeats", type=int, default=3, help="measurements, each in a fresh hub")
    parser.add_argument("--seed", type=int, default=1, help="the random choices' seed")
    args = parser.parse_args(argv)
    if args.games <= 0 or args.decisions <= 0 or args.repeats <= 0:
        raise SystemExit("--games, --decisions and --repeats must be positive")
    split = observation_split()
    if not split:
        compiled = len(kutnahora.compiled_modules())
        print(
            f"{compiled} modules run compiled here, the served observation among them: "
            "the observation is timed whole",
            flush=True,
        )
    results = []
    for repeat in range(args.repeats):
        result = measure(args.games, args.decisions, args.seed + repeat)
        results.append(result)
        parts = (
            f" (the engine's observer {result.observer_us:.0f}, pricing {result.pricing_us:.0f})"
            if split
            else ""
        )
        print(
            f"repeat {repeat + 1}: {result.total_us:.0f} µs of CPU per decision: observation "
            f"{result.observation_us:.0f}{parts}, submit {result.submit_us:.0f} (the store's insert "
            f"{result.store_us:.0f}, the engine's apply {result.apply_us:.0f})",
            flush=True,
        )

    def median(part: str) -> float:
        return float(statistics.median(float(getattr(result, part)) for result in results))

    parts = f" (observer {median('observer_us'):.0f}, pricing {median('pricing_us'):.0f})" if split else ""
    print(
        f"median of {args.repeats}: {median('total_us'):.0f} µs per decision ({args.games} games in turn, "
        f"{args.decisions} decisions each): observation {median('observation_us'):.0f}{parts}, submit "
        f"{median('submit_us'):.0f} (insert {median('store_us'):.0f}, apply {median('apply_us'):.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
