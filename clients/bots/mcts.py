"""The search bot: information-set Monte Carlo tree search over states resampled from its observation.

Each iteration draws one whole game the seat could be in (:func:`kutnahora.engine.resample`, from the
observation alone, so the bot never peeks), walks one tree shared by all draws (single-observer IS-MCTS:
a node is a sequence of decisions; among the options legal in this draw it picks by UCB, counting how
often each option was available), adds one node, plays the game out with a cheap rollout policy, and
credits every seat's reward to the decisions that seat took on the way. The decision played is the root
option visited most. The tree leaves out playing a card for no effect while a card half has one, which
halves the branching of most decisions (measured: against greedy, two players, 100 iterations, 7 wins in
12 games without this pruning, 11 in 12 with it).

The budget per decision is a number of iterations (deterministic for a seed) or milliseconds. A search can
go on from an earlier one's tree (the node below the option played, when the same seat decides again
right after it: :func:`subtree`), and can stop once the most visited option can no longer be overtaken
in the iterations left (``settle``): both are for the guided search of the neural bot; the search bot
itself starts afresh and spends its whole budget, as it always has. A reward is
mostly the share of the win, partly the point margin over the best other seat, so that a search also
learns from games nobody in it could win.

The bot plays over gRPC like any other: :func:`kutnahora.wire.engine_observation` reads the wire
observation back into the engine's, and the search runs on a worker thread so that the connection stays
served meanwhile.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kutnahora.clients.sdk import Bot, Choice, ClientError, GameInfo
from kutnahora.engine import (
    DecisionKind,
    GameState,
    Observation,
    Option,
    apply,
    default_components,
    option_text,
    resample,
)
from kutnahora.engine.components import ComponentSet
from kutnahora.engine.options import PlayCard, Skip
from kutnahora.engine.scoring import winners
from kutnahora.native import NATIVE, active_engine
from kutnahora.native.game import NativeGame
from kutnahora.v1.game_pb2 import Observation as WireObservation
from kutnahora.wire import engine_observation

DEFAULT_ITERATIONS = 400
"""Iterations per decision when no budget is given."""

EXPLORATION = 0.7
"""UCB's exploration constant, for rewards between 0 and 1."""

MARGIN_WEIGHT = 0.25
"""How much of a reward is the point margin (the rest is the share of the win)."""

MARGIN_SCALE = 20.0
"""A margin of this many points counts fully (more is clipped)."""

RolloutPolicy = Callable[[GameState, random.Random], Option]


def random_rollout(state: GameState, rng: random.Random) -> Option:
    """Any legal option, uniformly."""
    assert state.pending is not None
    return rng.choice(state.pending.options)


_YES_FIRST = frozenset({DecisionKind.TAX, DecisionKind.REFILL_MINERS})


def heuristic_rollout(state: GameState, rng: random.Random) -> Option:
    """Uniform, but never a card for no effect when a card half has one, never declining an optional
    effect, and always paying the tax and refilling the miners when asked: what random play wastes most."""
    pending = state.pending
    assert pending is not None
    options = pending.options
    kind = pending.kind
    if kind is DecisionKind.PLAY_CARD:
        useful = [o for o in options if isinstance(o, PlayCard) and o.action is not None]
        return rng.choice(useful) if useful else rng.choice(options)
    if kind in _YES_FIRST:
        return options[0]
    if len(options) > 1 and isinstance(options[-1], Skip):
        return options[rng.randrange(len(options) - 1)]
    return rng.choice(options)


def tree_options(state: GameState | Observation | NativeGame) -> tuple[Option, ...]:
    """The options the tree considers: every legal one, except a card for no effect while a card half
    has one (such a play wastes the card; leaving it out halves the branching of most decisions). Of a
    game state, of a game in the native core, or of an observation whose viewer owes the decision."""
    if isinstance(state, NativeGame):
        kind, options = state.kind(), state.legal()
    else:
        pending = state.pending
        assert pending is not None
        kind, options = pending.kind, pending.options
    if kind is DecisionKind.PLAY_CARD:
        useful = tuple(o for o in options if isinstance(o, PlayCard) and o.action is not None)
        if useful:
            return useful
    return options


ROLLOUTS: dict[str, RolloutPolicy] = {"heuristic": heuristic_rollout, "random": random_rollout}
"""Rollout policies by name."""


def _native_policy(rollout: RolloutPolicy, engine: str) -> str | None:
    """The name the native core plays ``rollout`` by, when the native ``engine`` plays rollouts and knows
    this policy (the search's own two); None: rollouts in the Python engine."""
    if engine != NATIVE:
        return None
    return next((name for name, policy in ROLLOUTS.items() if policy is rollout), None)


Guide = Callable[[GameState, tuple[Option, ...]], Sequence[float]]
"""Scores of the options of a drawn game's pending decision (higher: more worth searching), such as a
network's policy for the seat deciding, read from that seat's view: a guided search searches only the
``top`` best-scored options of each decision."""

NativeGuide = Callable[[NativeGame, tuple[Option, ...]], Sequence[float]]
"""A :data:`Guide`'s very scores read from a game in the native core, so that a search on the core need not
make the engine's copy of the state each time it asks (a guide that reads the core's game must give what
the guide gives of ``game.to_state()``)."""


class Node:
    """Statistics of one decision sequence: visits, the summed reward of the seat that chose it, and how
    often it was available (legal in the iteration's draw) when its parent was walked; in a guided search,
    the guide's scores of the options below it (from the first draw that reached it)."""

    __slots__ = ("available", "children", "scores", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[Option, Node] = {}
        self.visits = 0
        self.total = 0.0
        self.available = 0
        self.scores: dict[Option, float] | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The option chosen, and how the search went."""

    option: Option
    iterations: int
    seconds: float
    visits: dict[Option, int]
    value: float = 0.5
    """The mean reward the iterations brought the deciding seat (in [0, 1]; 0.5 before any)."""
    tree: Node | None = None
    """The searched tree (its root the observation's decision): the node below the option played is
    where the same seat's next search can go on, if that decision comes right after this one."""


def rewards(state: GameState) -> list[float]:
    """Each seat's reward for a finished game (see :func:`rewards_of`)."""
    return rewards_of([p.points for p in state.players], winners(state))


def rewards_of(points: list[float], won: list[int]) -> list[float]:
    """Each seat's reward: mostly its share of the win, partly its point margin over the best other seat,
    clipped at :data:`MARGIN_SCALE` points."""
    out = []
    for seat, mine in enumerate(points):
        best_other = max(p for s, p in enumerate(points) if s != seat)
        margin = max(-1.0, min(1.0, (mine - best_other) / MARGIN_SCALE))
        share = 1.0 / len(won) if seat in won else 0.0
        out.append((1 - MARGIN_WEIGHT) * share + MARGIN_WEIGHT * (0.5 + 0.5 * margin))
    return out


def search(
    observation: Observation,
    rng: random.Random,
    *,
    iterations: int | None = None,
    budget_ms: float | None = None,
    components: ComponentSet | None = None,
    rollout: RolloutPolicy = heuristic_rollout,
    exploration: float = EXPLORATION,
    guide: Guide | None = None,
    top: int = 4,
    tree: Node | None = None,
    settle: bool = False,
    others_top: int | None = None,
    engine: str | None = None,
    native_guide: NativeGuide | None = None,
) -> SearchResult:
    """Search from ``observation`` (its viewer owes the pending decision) and choose one of its options.

    Stops after ``iterations`` or ``budget_ms`` milliseconds, whichever comes first (at least one of them
    must be given); with iterations alone the choice is the same for generators in the same state.
    With a ``guide``, every decision in the tree (the root's, the other seats' and the viewer's later ones)
    is searched among the ``top`` options the guide scores highest only (``others_top`` at the decisions of
    the other seats, when given: one models each of them as playing the guide's favourite).

    ``tree`` goes on from an earlier search's node for this very decision (the node below the option
    played, when the same seat decides again right after it: :func:`subtree`); its visits count with the
    new iterations. With ``settle``, an iteration budget stops early once the most visited root option
    can no longer be overtaken in the iterations left: the choice is the same, the time is saved.

    The iterations are played by the rules ``engine`` (``"native"`` or ``"python"``; by default the one
    ``KUTNAHORA_ENGINE`` selects, :func:`kutnahora.native.active_engine`): with the search's own rollout
    policies the native core resamples, walks the tree and plays the rollouts with the same draws of
    ``rng``, so the choice is the same either way (a ``rollout`` of the caller's own runs in the engine).
    There the ``guide`` is asked about the engine's copy of the drawn game's state, or, given a
    ``native_guide`` (the same scores read from the core's game), not copied at all.
    """
    if iterations is None and budget_ms is None:
        raise ValueError("give a budget: iterations, milliseconds, or both")
    for kept in (top, others_top):
        if kept is not None and kept < 1:
            raise ValueError(f"a guided search searches at least one option of a decision, not {kept}")
    pending = observation.pending
    if pending is None or pending.seat != observation.viewer or not pending.options:
        raise ValueError("the observation's viewer owes no decision")
    components = components or default_components()
    native_policy = _native_policy(rollout, active_engine() if engine is None else engine)
    resampler = None
    if native_policy is not None and len(pending.options) > 1:
        # the whole iteration in the core: resampling, the walk down the tree and the rollout (a guide, if
        # any, reads the engine's copy of the state where it is asked)
        from kutnahora.native.resampling import Resampler

        resampler = Resampler(observation, components)
    started = time.perf_counter()
    deadline = None if budget_ms is None else started + budget_ms / 1000
    root = tree if tree is not None else Node()
    done = 0
    if len(pending.options) > 1:
        while (iterations is None or done < iterations) and (
            deadline is None or time.perf_counter() < deadline
        ):
            if settle and iterations is not None and _settled(root, pending.options, iterations - done):
                break
            if resampler is not None:
                assert native_policy is not None
                _iterate_native(
                    root,
                    resampler.draw(rng),
                    rng,
                    native_policy,
                    exploration,
                    guide,
                    top,
                    observation.viewer,
                    top if others_top is None else others_top,
                    native_guide,
                )
            else:
                _iterate(
                    root,
                    resample(observation, rng, components),
                    rng,
                    rollout,
                    exploration,
                    guide,
                    top,
                    observation.viewer,
                    top if others_top is None else others_top,
                )
            done += 1
    visits = {o: root.children[o].visits if o in root.children else 0 for o in pending.options}
    best = max(
        pending.options, key=lambda o: (visits[o], _mean(root.children.get(o)), -pending.options.index(o))
    )
    tried = [child for child in root.children.values() if child.visits]
    value = sum(c.total for c in tried) / sum(c.visits for c in tried) if tried else 0.5
    return SearchResult(best, done, time.perf_counter() - started, visits, value, root)


def subtree(result: SearchResult, searched: Observation, observation: Observation) -> Node | None:
    """The node of ``result``'s tree (a search of ``searched``) that a search of ``observation`` can go
    on from: the one below the option played, if ``observation`` is the same seat's view right after
    that decision (nothing else was applied in between); else None."""
    if (
        result.tree is None
        or observation.viewer != searched.viewer
        or observation.version != searched.version + 1
    ):
        return None
    return result.tree.children.get(result.option)


def _settled(root: Node, options: tuple[Option, ...], left: int) -> bool:
    """Whether the most visited of the root's ``options`` stays the most visited whatever ``left`` more
    iterations do (a tree gone on from may hold other options, of decisions other draws led to)."""
    visits = heapq.nlargest(2, (root.children[o].visits for o in options if o in root.children))
    first, second = [*visits, 0, 0][:2]
    return first - second > left


def _mean(node: Node | None) -> float:
    return node.total / node.visits if node is not None and node.visits else 0.0


def _narrow(
    node: Node,
    state: Any,
    options: tuple[Option, ...],
    guide: Callable[[Any, tuple[Option, ...]], Sequence[float]],
    top: int,
) -> tuple[Option, ...]:
    """The ``top`` options of ``options`` the guide scores highest (ties: the earlier option), the guide
    asked once per node and again only for options it has not scored there (another draw's). ``state``
    is what the guide reads (the engine's state, or the core's game for a :data:`NativeGuide`), or a
    function giving it, called only when the guide is asked."""
    scores = node.scores
    if scores is None or any(o not in scores for o in options):
        asked = state() if callable(state) else state
        fresh = dict(zip(options, guide(asked, options), strict=True))
        scores = node.scores = fresh if scores is None else {**fresh, **scores}
    known = scores
    ranked = sorted(range(len(options)), key=lambda i: (-known[options[i]], i))
    return tuple(options[i] for i in sorted(ranked[:top]))


def _step(
    node: Node, options: Sequence[Option], rng: random.Random, exploration: float
) -> tuple[Option, Node, bool]:
    """One step down the tree from ``node``: an untried option (drawn with ``rng``) and its new child,
    expanded (True); or the tried option of the best upper confidence bound and its child (False). Every
    option offered has its ``available`` count raised, as the bound needs."""
    children = node.children
    untried = [o for o in options if o not in children]
    if untried:
        option = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
        children[option] = Node()
        for other in options:
            known = children.get(other)
            if known is not None:
                known.available += 1
        return option, children[option], True
    best_score = -1.0
    chosen = options[0]
    for option in options:
        child = children[option]
        child.available += 1
        score = child.total / child.visits + exploration * math.sqrt(math.log(child.available) / child.visits)
        if score > best_score:
            best_score, chosen = score, option
    return chosen, children[chosen], False


def _iterate(
    root: Node,
    state: GameState,
    rng: random.Random,
    rollout: RolloutPolicy,
    exploration: float,
    guide: Guide | None = None,
    top: int = 4,
    viewer: int | None = None,
    others_top: int = 4,
) -> None:
    """One iteration on one drawn state: select, expand one node, roll out, back up (with a ``guide``,
    among each decision's ``top`` options)."""
    node = root
    path: list[tuple[Node, int]] = []
    while state.pending is not None:
        seat = state.pending.seat
        options = tree_options(state)
        keep = top if seat == viewer else others_top
        if guide is not None and len(options) > keep:
            options = _narrow(node, state, options, guide, keep)
        option, child, expanded = _step(node, options, rng, exploration)
        apply(state, option)
        path.append((child, seat))
        if expanded:
            break
        node = child
    while state.pending is not None:
        apply(state, rollout(state, rng))
    reward = rewards(state)
    for visited, seat in path:
        visited.visits += 1
        visited.total += reward[seat]


def _iterate_native(
    root: Node,
    game: NativeGame,
    rng: random.Random,
    policy: str,
    exploration: float,
    guide: Guide | None = None,
    top: int = 4,
    viewer: int | None = None,
    others_top: int = 4,
    native_guide: NativeGuide | None = None,
) -> None:
    """:func:`_iterate` on a game in the native core: the same choices, the same draws of ``rng``, the same
    tree (a ``guide`` is asked about the engine's copy of the game's state, when it is asked; a
    ``native_guide`` about the core's game itself)."""
    node = root
    path: list[tuple[Node, int]] = []
    while not game.over:
        seat = game.seat
        assert seat is not None
        options = tree_options(game)
        keep = top if seat == viewer else others_top
        if guide is not None and len(options) > keep:
            if native_guide is not None:
                options = _narrow(node, game, options, native_guide, keep)
            else:
                options = _narrow(node, game.to_state, options, guide, keep)
        option, child, expanded = _step(node, options, rng, exploration)
        game.apply_listed(option)
        path.append((child, seat))
        if expanded:
            break
        node = child
    if game.over:
        points = list(game.points())
        reward = rewards_of([float(p) for p in points], _winners(points, list(game.groschen())))
    else:
        points, won = game.rollout(policy, rng)
        reward = rewards_of([float(p) for p in points], won)
    for visited, seat in path:
        visited.visits += 1
        visited.total += reward[seat]


def _winners(points: list[int], groschen: list[int]) -> list[int]:
    best = max(zip(points, groschen, strict=True))
    return [seat for seat, pair in enumerate(zip(points, groschen, strict=True)) if pair == best]


async def choose_by(
    observation: WireObservation, decide: Callable[[Observation], Option], *, in_thread: bool = True
) -> Choice:
    """A search bot's answer to a seat's wire observation: its one option when it has one (nothing to
    search), or else the option ``decide`` chooses for the observation read back into the engine's, in a
    worker thread when ``in_thread`` (a search would hold the event loop for its whole budget)."""
    options = observation.pending.options
    if len(options) == 1:
        return options[0]
    view = engine_observation(observation)
    option = await asyncio.to_thread(decide, view) if in_thread else decide(view)
    return option_text(option)


class MctsBot(Bot):
    """Chooses by information-set Monte Carlo tree search with a budget per decision.

    ``seed`` makes it deterministic with an iteration budget: each decision's generator is seeded from the
    seed and the game's version, so a decision does not depend on the ones before it.
    """

    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        iterations: int | None = None,
        budget_ms: float | None = None,
        rollout: str = "heuristic",
    ) -> None:
        if iterations is None and budget_ms is None:
            iterations = DEFAULT_ITERATIONS
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations}")
        if budget_ms is not None and budget_ms <= 0:
            raise ValueError(f"the budget must be more than 0 ms, not {budget_ms}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"unknown rollout policy {rollout!r}; known: {', '.join(sorted(ROLLOUTS))}")
        self.seed = seed
        self.iterations = iterations
        self.budget_ms = budget_ms
        self.rollout = ROLLOUTS[rollout]
        self.components = default_components()
        self.last: SearchResult | None = None

    def start(self, game: GameInfo) -> None:
        if game.components.name != self.components.name:
            raise ClientError(
                f"the mcts bot simulates the engine's default component set ({self.components.name!r}); "
                f"this game uses {game.components.name!r}"
            )

    def _rng(self, version: int) -> random.Random:
        return random.Random(f"{self.seed}:{version}") if self.seed is not None else random.Random()

    def decide(self, observation: Observation) -> Option:
        """The option the search chooses for an engine observation."""
        self.last = search(
            observation,
            self._rng(observation.version),
            iterations=self.iterations,
            budget_ms=self.budget_ms,
            components=self.components,
            rollout=self.rollout,
        )
        return self.last.option

    async def choose(self, observation: WireObservation) -> Choice:
        return await choose_by(observation, self.decide)
