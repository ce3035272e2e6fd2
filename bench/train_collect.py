"""kutnahora-train's collection on each engine: samples per CPU second, and where the CPU goes.

``python -m kutnahora.bench.train_collect`` fills one PPO batch the way ``kutnahora-train run`` does
(:meth:`kutnahora.envs.training.Rollouts.collect`: 24 games at once, the league given, a fresh network of
the default shape, one past copy of it in the pool so that ``past`` games are played) on the pure engine
and on the native core in turn (``KUTNAHORA_ENGINE``), the same seed each time, and prints per engine the
median samples per CPU second of the process over the rounds, and the median share of the collection's
CPU taken by each part, timed around the calls:

- **rules**: applying decisions, counting and listing the options' action ids, dealing games (the engine's
  or the core's);
- **vectors**: the learning seats' and the past copies' observation vectors;
- **network**: the learning network's batched forward pass, and the past copies' NumPy forward passes;
- **greedy**: the greedy bot's decisions (the served wire observation and the bot);
- **mcts**: the search bot's decisions (its observation and search);
- **other**: the rest (the sampling, the buffer, the loop).

Both engines take the same samples for a seed (``tests/envs/test_training_engines.py``), so the rounds
compare the same work. The timers cost about a microsecond a call.

    python -m kutnahora.bench.train_collect                                   # the default league
    python -m kutnahora.bench.train_collect --opponents greedy=6,self=2,past=2,mcts:10=0.5 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

from kutnahora.native import ENGINE_VARIABLE, NATIVE, PYTHON, native_available

PARTS = ("rules", "vectors", "network", "greedy", "mcts", "other")
"""The parts of a collection's CPU, in the order printed."""


@contextmanager
def timed(spent: dict[str, float]) -> Iterator[Callable[[Any], Any]]:
    """The collection's parts timed in CPU seconds into ``spent`` while the block runs; it is given a
    function that wraps the learning network so that its forward passes are timed too."""
    from kutnahora.clients.bots.mcts import MctsBot
    from kutnahora.envs.matches import NetPlayer
    from kutnahora.envs.opponents import BotOpponent
    from kutnahora.envs.stepping import CoreGame, CoreStepper, EngineGame, EngineStepper

    targets: list[tuple[type, str, str]] = [
        *((EngineGame, name, "rules") for name in ("apply", "apply_option", "count", "ids")),
        *((CoreGame, name, "rules") for name in ("apply", "apply_option", "count", "ids")),
        (EngineStepper, "new", "rules"),
        (CoreStepper, "new", "rules"),
        (EngineGame, "vector", "vectors"),
        (CoreGame, "vector", "vectors"),
        (NetPlayer, "index", "network"),
        (BotOpponent, "choose", "greedy"),
        (MctsBot, "decide", "mcts"),
    ]
    clock = time.process_time

    def timer(function: Callable[..., Any], part: str) -> Callable[..., Any]:
        @wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            started = clock()
            try:
                return function(*args, **kwargs)
            finally:
                spent[part] = spent.get(part, 0.0) + clock() - started

        return run

    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in targets]
    for owner, name, part in targets:
        setattr(owner, name, timer(owner.__dict__[name], part))

    def network(model: Any) -> Any:
        return timer(model, "network")

    try:
        yield network
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def collect_once(engine: str, opponents: str, batch: int, games: int, seed: int) -> dict[str, float]:
    """One batch collected on ``engine``: its samples, CPU seconds and each part's CPU seconds."""
    import torch

    from kutnahora.envs.models import build_model, to_numpy
    from kutnahora.envs.training import Buffer, Rollouts
    from kutnahora.learned import network
    from kutnahora.learned.actions import ActionSpace
    from kutnahora.learned.encoding import ObservationLayout

    previous = os.environ.get(ENGINE_VARIABLE)
    os.environ[ENGINE_VARIABLE] = engine
    try:
        torch.set_num_threads(1)
        layout = ObservationLayout()
        space = ActionSpace(layout.components)
        torch.manual_seed(seed)
        model = build_model(layout.size, [256, 128], space.size)
        model.eval()
        config = {"players": "2=7,3=1,4=2", "opponents": opponents, "games": games, "pool_size": 8}
        with tempfile.TemporaryDirectory() as pool:
            meta = {"hidden": [256, 128], "observation": "normalized", "seed": seed}
            network.save(to_numpy(model, meta), Path(pool) / "iter-00000.npz")
            rollouts = Rollouts(config, random.Random(seed), Path(pool))
            rollouts.load_pool()
            buffer = Buffer(batch, 1.0, 0.95)
            spent: dict[str, float] = {}
            with timed(spent) as wrap:
                torch.manual_seed(seed)
                started = time.process_time()
                rollouts.collect(wrap(model), buffer)
                cpu = time.process_time() - started
    finally:
        if previous is None:
            del os.environ[ENGINE_VARIABLE]
        else:
            os.environ[ENGINE_VARIABLE] = previous
    spent["other"] = cpu - sum(spent.values())
    return {"samples": buffer.count, "cpu": cpu, **spent}


def main(argv: Sequence[str] | None = None) -> int:
    """Collect on each engine in turn, ``--repeats`` rounds; print the medians (and write ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m kutnahora.bench.train_collect", description=__doc__)
    parser.add_argument("--opponents", default="self=5,past=3,greedy=3,mcts:10=0.25", help="the league")
    parser.add_argument("--batch", type=int, default=4096, help="samples per batch (at least)")
    parser.add_argument("--games", type=int, default=24, help="games played at once")
    parser.add_argument("--repeats", type=int, default=3, help="rounds (each engine once a round)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and the network")
    parser.add_argument("--json", type=Path, help="write every round's figures here too")
    args = parser.parse_args(argv)
    engines = [PYTHON, NATIVE] if native_available() else [PYTHON]
    rounds: dict[str, list[dict[str, float]]] = {engine: [] for engine in engines}
    for _ in range(args.repeats):
        for engine in engines:
            rounds[engine].append(collect_once(engine, args.opponents, args.batch, args.games, args.seed))
    print(f"league {args.opponents}, batch {args.batch}, {args.games} games at once, {args.repeats} rounds")
    medians: dict[str, float] = {}
    for engine in engines:
        figures = rounds[engine]
        rate = statistics.median(f["samples"] / f["cpu"] for f in figures)
        medians[engine] = rate
        shares = ", ".join(
            f"{part} {100 * statistics.median(f.get(part, 0.0) / f['cpu'] for f in figures):.1f} %"
            for part in PARTS
        )
        samples = int(figures[0]["samples"])
        print(f"{engine}: {rate:,.0f} samples per CPU second ({samples:,} samples); {shares}")
    if NATIVE in medians:
        print(f"native / python: {medians[NATIVE] / medians[PYTHON]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"league": args.opponents, "rounds": rounds}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
