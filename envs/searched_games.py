"""Expert iteration's self-play: games in which every seat decides by a search (the search bot's or the
network's own PUCT, :class:`Searcher`), each decision with two or more options a sample for
:mod:`kutnahora.envs.distill`. Game ``i`` of a run has its player count and seed from the run's seed and
``i`` alone (:func:`plan`), so it is the same game whichever worker process plays it (:func:`generate`),
and each finished game is written as its shard (:mod:`kutnahora.envs.shards`). Needs NumPy only.
"""

from __future__ import annotations

import multiprocessing
import random
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from kutnahora.clients.bots import mcts, mcts_budget, neural
from kutnahora.engine import GameOptions, GameState, Option, apply, new_game, observe
from kutnahora.envs.shards import Samples, shard_path, write_shard
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import returns
from kutnahora.learned.state_encoding import StateEncoder


@dataclass(frozen=True)
class Searcher:
    """A search that decides a seat's move: ``mcts`` (the search bot) or ``neural`` (PUCT guided by the
    network), with a budget of iterations or milliseconds per decision."""

    kind: str
    iterations: int | None
    budget_ms: float | None

    @classmethod
    def parse(cls, text: str) -> Searcher:
        """``mcts:200``, ``neural:100``, ``mcts:500ms``; ``ValueError`` says what is wrong."""
        kind, sep, budget = text.partition(":")
        if kind not in ("mcts", "neural") or not sep:
            raise ValueError(f"a searcher is mcts:BUDGET or neural:BUDGET (such as mcts:200), not {text!r}")
        iterations, budget_ms = mcts_budget(budget)
        return cls(kind, iterations, budget_ms)

    def __str__(self) -> str:
        return f"{self.kind}:{self.iterations if self.iterations is not None else f'{self.budget_ms:g}ms'}"

    def visits(
        self,
        state: GameState,
        seat: int,
        rng: random.Random,
        evaluator: neural.Evaluator | None,
    ) -> tuple[dict[Option, int], Option, float]:
        """The root's visit count of each legal option of ``seat``'s pending decision, searched from its
        observation alone, the option the search chooses (the most visited), and the search's value of
        the position for ``seat`` on the returns' scale ([−1, 1]; the search bot's mean reward r in [0, 1]
        is read as 2r − 1)."""
        view = observe(state, seat)
        if self.kind == "mcts":
            found = mcts.search(view, rng, iterations=self.iterations, budget_ms=self.budget_ms)
            return found.visits, found.option, 2.0 * found.value - 1.0
        if evaluator is None:
            raise ValueError("a neural searcher needs the network")
        result = neural.search(view, evaluator, rng, simulations=self.iterations, budget_ms=self.budget_ms)
        return result.visits, result.option, result.value


def play_searched_game(
    searcher: Searcher,
    players: int,
    seed: int,
    explore_moves: int,
    evaluator: neural.Evaluator | None = None,
    layout: ObservationLayout | None = None,
    learner: network.PolicyValueNet | None = None,
) -> tuple[Samples, GameState]:
    """One self-play game in which every seat's decisions are searched by ``searcher``: its samples and
    the final state. The moves played are the searches' (sampled from the visits for the first
    ``explore_moves``, then the most visited), or with a ``learner`` network, after the first
    ``explore_moves``, that network's favourite: the positions the network's own play reaches, labelled by
    the search."""
    layout = layout or ObservationLayout()
    space = ActionSpace(layout.components)
    encoder = StateEncoder(layout, normalized=True)  # one per game: it rewrites only what changed
    state = new_game(GameOptions(players=players), seed)
    moves = random.Random(f"{seed}:moves")
    vectors: list[npt.NDArray[np.float32]] = []
    masks: list[npt.NDArray[np.bool_]] = []
    targets: list[npt.NDArray[np.float32]] = []
    seats: list[int] = []
    searched: list[float] = []
    while state.pending is not None:
        options = state.pending.options
        if len(options) == 1:
            apply(state, options[0])
            continue
        seat = state.pending.seat
        visits, best, value = searcher.visits(
            state, seat, random.Random(f"{seed}:{state.version}"), evaluator
        )
        counts = np.array([visits.get(o, 0) for o in options], dtype=np.float64)
        if counts.sum() == 0:  # a search with no visit at the root (a budget too small): its choice
            counts[options.index(best)] = 1.0
        ids = space.ids(options)
        target = np.zeros(space.size, dtype=np.float32)
        target[ids] = counts / counts.sum()
        mask = np.zeros(space.size, dtype=bool)
        mask[ids] = True
        vectors.append(encoder.encode(state, seat))
        masks.append(mask)
        targets.append(target)
        seats.append(seat)
        searched.append(value)
        explore = len(seats) <= explore_moves
        if explore:
            best = moves.choices(options, weights=counts.tolist())[0]
        elif learner is not None:
            logits, _ = learner.forward(vectors[-1])
            best = options[int(np.argmax(logits[0, ids]))]
        apply(state, best)
    outcome = returns(state)
    samples = Samples.from_rows(
        vectors, masks, targets, [outcome[s] for s in seats], seats, space.size, searched
    )
    return samples, state


@dataclass(frozen=True)
class Task:
    """One game to play and write: its number, player count and seed, how to search, and where."""

    game: int
    players: int
    seed: int
    searcher: str
    explore_moves: int
    data: str
    weights: str | None
    """The network of a ``neural`` searcher or a learner (a weights file that does not change once
    written)."""
    learner: bool = False
    """Whether the network (``weights``) plays the moves, the searcher only labelling them."""


def plan(seed: int, game: int, players: dict[str, float]) -> tuple[int, int]:
    """Game number ``game``'s player count and seed: from the run's seed and the number alone."""
    rng = random.Random(f"distill:{seed}:{game}")
    names = list(players)
    return int(rng.choices(names, [players[n] for n in names])[0]), rng.getrandbits(62)


def learner_plays(seed: int, game: int, share: float) -> bool:
    """Whether the network plays game number ``game``'s moves (``share`` of the games), from the run's
    seed and the number alone."""
    return share > 0 and random.Random(f"distill:{seed}:{game}:learner").random() < share


@cache
def _evaluator(weights: str) -> neural.Evaluator:
    return neural.Evaluator(network.load(Path(weights)), ObservationLayout())


def play_task(task: Task) -> tuple[int, int]:
    """Play one game and write its shard: (game number, samples)."""
    searcher = Searcher.parse(task.searcher)
    evaluator = _evaluator(task.weights) if task.weights else None
    samples, _ = play_searched_game(
        searcher,
        task.players,
        task.seed,
        task.explore_moves,
        evaluator if searcher.kind == "neural" else None,
        learner=evaluator.net if task.learner and evaluator is not None else None,
    )
    meta = {"players": task.players, "seed": task.seed, "searcher": task.searcher, "learner": task.learner}
    write_shard(Path(task.data), task.game, samples, meta)
    return task.game, len(samples)


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the parent, which stops the pool (the games under way are dropped)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def generate(tasks: Sequence[Task], workers: int, done: Callable[[int, int], None]) -> None:
    """Play the tasks whose game has no shard yet, in ``workers`` processes (in this one for one);
    ``done(game, samples)`` after each."""
    todo = [t for t in tasks if not shard_path(Path(t.data), t.game).exists()]
    if workers <= 1 or len(todo) <= 1:
        for task in todo:
            done(*play_task(task))
        return
    # spawn, not fork: the parent holds PyTorch's threads, which a forked child must not inherit.
    context = multiprocessing.get_context("spawn")
    with context.Pool(min(workers, len(todo)), initializer=_quiet_worker) as pool:
        for game, count in pool.imap_unordered(play_task, todo):
            done(game, count)
