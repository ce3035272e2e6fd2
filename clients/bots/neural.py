"""The neural bot: a trained policy and value network, alone or guiding a search, in NumPy alone.

Without a search (``neural``) the bot reads its seat's observation as the environments' normalised vector
(:class:`~kutnahora.learned.encoding.ObservationLayout`) and plays the legal option the network's policy
likes most. With a search (``neural:200`` for 200 simulations a decision, ``neural:150ms`` for a time
budget) it runs PUCT, the search of AlphaZero, over the same determinizations the search bot uses: each
simulation draws one whole game the seat could be in (:func:`kutnahora.engine.resample`, from the
observation alone, so the bot never peeks), walks one tree shared by all draws (a node is a sequence of
decisions; among the options legal in this draw it picks by the PUCT score, the network's policy as the
prior), and at the first decision not yet in the tree asks the network instead of playing the game out:
the policy there becomes that node's prior and the network's value of each seat's observation (one
batched forward pass; at two players the other seat's is the negative) is backed up, each decision on the
path credited with the value of the seat that took it. A value is a terminal return
(:func:`kutnahora.learned.outcome.returns`), so a simulation costs a draw, a few moves and one forward pass,
not a whole game played out: many more simulations fit in the search bot's time.
The decision played is the root option visited most. Like the search bot, the tree leaves out playing a
card for no effect while a card half has one.

With ``candidates`` (``neural-mcts:100``) the network only chooses what to search: the search bot's own
search (:func:`kutnahora.clients.bots.mcts.search`, its determinizations, UCB and heuristic rollouts) runs
with each decision of its tree, the seat's own and the other seats', narrowed to the ``candidates``
options the deciding seat's policy likes most (:func:`guided_search`), so its iterations are not spread
over options the policy would never play. Its search goes on from the tree of its last one when its seat
decides again right after it (within a turn, as after playing a card: the node below the option played
already holds the visits of that decision), and stops early once its choice can no longer change; the
new iterations are counted against the budget, the inherited ones are free.

The network is :mod:`kutnahora.learned.network`'s, read from a weights file shipped in the package
(``kutnahora/learned/weights/neural.npz``; ``guide.npz`` for ``neural-mcts``) or another (``weights=``);
NumPy is all it needs: nothing here imports a deep-learning library.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kutnahora.clients.bots import mcts
from kutnahora.clients.bots.mcts import tree_options
from kutnahora.clients.sdk import Bot, Choice, ClientError, GameInfo
from kutnahora.engine import GameState, Observation, Option, apply, default_components, resample
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.core_table import encoding_arguments
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import returns
from kutnahora.learned.state_encoding import StateEncoder
from kutnahora.native import core_module
from kutnahora.native.game import NativeGame
from kutnahora.v1.game_pb2 import Observation as WireObservation

EXPLORATION = 1.5
"""PUCT's exploration constant (values are returns in [−1, 1])."""

TOP = 4
"""How many of the network's favourite options of each of its own seat's decisions the guided search
(``neural-mcts``) searches among."""

OTHERS = TOP
"""How many of the network's favourite options of each decision of the other seats the guided search
searches among (one would model each of them as playing the network's favourite)."""


@cache
def shipped_network(path: Path = network.WEIGHTS) -> network.PolicyValueNet:
    """The network of a weights file, read once per process."""
    return network.load(path)


class Node:
    """A decision sequence's statistics: visits and summed value of the seat that chose it, the prior
    of the options below it (from the network, at the first draw that reached it) and its children."""

    __slots__ = ("children", "priors", "total", "value", "visits")

    def __init__(self) -> None:
        self.children: dict[Option, Node] = {}
        self.priors: dict[Option, float] | None = None
        self.value = 0.0
        """The network's value for the seat deciding here, at the first draw: an unvisited option's score."""
        self.visits = 0
        self.total = 0.0


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The option chosen, and how the search went."""

    option: Option
    simulations: int
    seconds: float
    visits: dict[Option, int]
    value: float = 0.0
    """The mean value the simulations backed up for the deciding seat (a return, in [−1, 1])."""


class Evaluator:
    """The network applied to game states: the prior of the pending decision's options and each seat's
    value, for one state at a time."""

    def __init__(self, net: network.PolicyValueNet, layout: ObservationLayout) -> None:
        self.net = net
        self.layout = layout
        self.space = ActionSpace(layout.components)
        self.encoder = StateEncoder(layout, normalized=True)
        self._core_encoding: Any = None
        """The core's ``Encoding`` of ``layout``, made when a game in the core is first scored."""
        self._vector = np.empty(layout.size, dtype=np.float32)
        """Where the vector of the state being scored is written (the network reads it and keeps nothing;
        like the encoder's own buffers, one evaluator scores one state at a time)."""

    def scores(self, state: GameState, options: tuple[Option, ...]) -> list[float]:
        """The policy's logits of ``options``, the pending decision's, for the seat that owes it (read
        from that seat's view of ``state``): the guided search's scores."""
        pending = state.pending
        assert pending is not None
        return self._logits(self.encoder.encode(state, pending.seat, self._vector), options)

    def native_scores(self, game: NativeGame, options: tuple[Option, ...]) -> list[float]:
        """:meth:`scores` of a game in the native core, the vector written by the core (the same bytes
        as the engine's encoder writes of ``game.to_state()``, without making that state)."""
        seat = game.seat
        assert seat is not None
        if self._core_encoding is None:
            self._core_encoding = core_module().Encoding(*encoding_arguments(self.layout))
        game.encode(self._core_encoding, seat, True, self._vector)
        return self._logits(self._vector, options)

    def _logits(self, vector: npt.NDArray[np.float32], options: tuple[Option, ...]) -> list[float]:
        logits, _ = self.net.forward(vector)
        out: list[float] = logits[0, self.space.ids(options)].tolist()
        return out

    def evaluate(
        self, state: GameState, options: tuple[Option, ...]
    ) -> tuple[dict[Option, float], list[float]]:
        """Priors over ``options`` (the pending seat's) and every seat's value."""
        pending = state.pending
        assert pending is not None
        mover = pending.seat
        n = len(state.players)
        seats = [mover] if n == 2 else [mover, *(s for s in range(n) if s != mover)]
        vectors = np.stack([self.encoder.encode(state, s) for s in seats])
        logits, values = self.net.forward(vectors)
        ids = self.space.ids(options)
        priors = network.softmax(logits[0, ids])
        if n == 2:
            v = float(values[0])
            seat_values = [v, -v] if mover == 0 else [-v, v]
        else:
            seat_values = [0.0] * n
            for s, value in zip(seats, values, strict=True):
                seat_values[s] = float(value)
        return dict(zip(options, priors.tolist(), strict=True)), seat_values


def search(
    observation: Observation,
    evaluator: Evaluator,
    rng: random.Random,
    *,
    simulations: int | None = None,
    budget_ms: float | None = None,
    exploration: float = EXPLORATION,
) -> SearchResult:
    """PUCT from ``observation`` (its viewer owes the pending decision) over resampled games; stops after
    ``simulations`` or ``budget_ms`` milliseconds, whichever comes first (one of them must be given)."""
    if simulations is None and budget_ms is None:
        raise ValueError("give a budget: simulations, milliseconds, or both")
    pending = observation.pending
    if pending is None or pending.seat != observation.viewer or not pending.options:
        raise ValueError("the observation's viewer owes no decision")
    components = evaluator.space.components
    started = time.perf_counter()
    deadline = None if budget_ms is None else started + budget_ms / 1000
    root = Node()
    done = 0
    if len(pending.options) > 1:
        # The root's prior is the viewer's own policy, the same in every draw: asked once, before the
        # simulations, so that each of them walks down to a new leaf.
        first = resample(observation, rng, components)
        root.priors, values = evaluator.evaluate(first, tree_options(first))
        root.value = values[pending.seat]
        while (simulations is None or done < simulations) and (
            deadline is None or time.perf_counter() < deadline
        ):
            _simulate(root, resample(observation, rng, components), evaluator, exploration)
            done += 1
    visits = {o: root.children[o].visits if o in root.children else 0 for o in pending.options}
    priors = root.priors or {}
    best = max(pending.options, key=lambda o: (visits[o], priors.get(o, 0.0), -pending.options.index(o)))
    tried = [child for child in root.children.values() if child.visits]
    value = sum(c.total for c in tried) / sum(c.visits for c in tried) if tried else root.value
    return SearchResult(best, done, time.perf_counter() - started, visits, value)


def guided_search(
    observation: Observation,
    evaluator: Evaluator,
    rng: random.Random,
    *,
    iterations: int | None = None,
    budget_ms: float | None = None,
    top: int = TOP,
    others: int = OTHERS,
    tree: mcts.Node | None = None,
    settle: bool = False,
) -> mcts.SearchResult:
    """The search bot's search (:func:`kutnahora.clients.bots.mcts.search`: determinizations, UCB,
    heuristic rollouts) guided by the network: each decision in its tree is searched among the options
    the policy of the seat deciding likes most (:meth:`Evaluator.scores`), the ``top`` best at the
    viewer's own decisions, the ``others`` best at the other seats'. Stops after ``iterations`` or
    ``budget_ms`` milliseconds, whichever comes first; ``tree`` and ``settle`` as for
    :func:`~kutnahora.clients.bots.mcts.search`."""
    return mcts.search(
        observation,
        rng,
        iterations=iterations,
        budget_ms=budget_ms,
        components=evaluator.space.components,
        guide=evaluator.scores,
        top=top,
        others_top=others,
        tree=tree,
        settle=settle,
        native_guide=evaluator.native_scores,
    )


def _simulate(root: Node, state: GameState, evaluator: Evaluator, exploration: float) -> None:
    """One simulation on one drawn state: select by PUCT, expand one node with the network, back up."""
    node = root
    path: list[tuple[Node, int]] = []
    values: list[float] | None = None
    while state.pending is not None:
        options = tree_options(state)
        if len(options) == 1:
            apply(state, options[0])
            continue
        seat = state.pending.seat
        priors = node.priors
        missing = priors is None or any(o not in priors for o in options)
        if missing:
            fresh, values = evaluator.evaluate(state, options)
            if priors is None:
                node.priors = fresh
                node.value = values[seat]
                break
            for option in options:
                priors.setdefault(option, fresh[option])
        assert node.priors is not None
        priors = node.priors
        total_prior = sum(priors[o] for o in options) or 1.0
        parent_visits = sum(node.children[o].visits for o in options if o in node.children)
        scale = exploration * math.sqrt(parent_visits + 1)
        first_play = node.value
        best_score = -math.inf
        chosen = options[0]
        for option in options:
            child = node.children.get(option)
            prior = priors[option] / total_prior
            if child is None or not child.visits:
                score = first_play + scale * prior
            else:
                score = child.total / child.visits + scale * prior / (1 + child.visits)
            if score > best_score:
                best_score, chosen = score, option
        child = node.children.get(chosen)
        if child is None:
            child = node.children[chosen] = Node()
        apply(state, chosen)
        path.append((child, seat))
        node = child
        values = None
    if state.pending is None:
        values = returns(state)
    assert values is not None
    root.visits += 1
    for visited, seat in path:
        visited.visits += 1
        visited.total += values[seat]


class NeuralBot(Bot):
    """Plays by the trained network's policy, or by a search it guides (``simulations`` or ``budget_ms``
    a decision): PUCT with the network's policy and value, or with ``candidates`` the search bot's search,
    each decision narrowed to the deciding seat's ``candidates`` favourite options (``neural-mcts``).
    ``seed`` makes a search
    deterministic with a simulation budget."""

    name = "neural"

    def __init__(
        self,
        seed: int | None = None,
        simulations: int | None = None,
        budget_ms: float | None = None,
        weights: Path | None = None,
        exploration: float = EXPLORATION,
        candidates: int | None = None,
        others: int = OTHERS,
    ) -> None:
        if simulations is not None and simulations < 1:
            raise ValueError(f"simulations must be at least 1, not {simulations}")
        if budget_ms is not None and budget_ms <= 0:
            raise ValueError(f"the budget must be more than 0 ms, not {budget_ms}")
        if candidates is not None:
            if candidates < 1:
                raise ValueError(f"the guided search needs at least one candidate, not {candidates}")
            if others < 1:
                raise ValueError(f"the guided search keeps at least one option of another seat, not {others}")
            if simulations is None and budget_ms is None:
                raise ValueError("the guided search needs a budget: iterations, milliseconds, or both")
            self.name = "neural-mcts"
        self.candidates = candidates
        self.others = others
        self.seed = seed
        self.simulations = simulations
        self.budget_ms = budget_ms
        self.exploration = exploration
        self.layout = ObservationLayout(default_components())
        self.net = shipped_network(weights or (network.WEIGHTS if candidates is None else network.GUIDE))
        if (
            self.net.inputs != self.layout.size
            or self.net.actions != ActionSpace(self.layout.components).size
        ):
            raise ValueError(
                f"the weights read {self.net.inputs} inputs and give {self.net.actions} actions; this "
                f"version's observations have {self.layout.size} entries"
            )
        self.evaluator = Evaluator(self.net, self.layout)
        self.last: SearchResult | None = None
        self.last_guided: mcts.SearchResult | None = None
        self._guided_view: Observation | None = None
        """The observation ``last_guided`` searched."""

    @property
    def searches(self) -> bool:
        """Whether the bot searches (else it plays the policy's favourite)."""
        return self.simulations is not None or self.budget_ms is not None

    def start(self, game: GameInfo) -> None:
        self.last_guided, self._guided_view = None, None
        if game.components.name != self.layout.components.name:
            raise ClientError(
                f"the neural bot was trained on the engine's default component set "
                f"({self.layout.components.name!r}); this game uses {game.components.name!r}"
            )

    def decide(self, observation: Observation) -> Option:
        """The option chosen for an engine observation whose viewer owes the decision."""
        pending = observation.pending
        if pending is None or pending.seat != observation.viewer or not pending.options:
            raise ValueError("the observation's viewer owes no decision")
        if len(pending.options) == 1:
            return pending.options[0]
        if not self.searches:
            vector = self.layout.encode(observation, normalized=True)
            ids = self.evaluator.space.ids(pending.options)
            logits, _ = self.net.forward(vector)
            return pending.options[int(np.argmax(logits[0, ids]))]
        rng = (
            random.Random(f"{self.seed}:{observation.version}") if self.seed is not None else random.Random()
        )
        if self.candidates is not None:
            previous = self.last_guided
            guided = guided_search(
                observation,
                self.evaluator,
                rng,
                iterations=self.simulations,
                budget_ms=self.budget_ms,
                top=self.candidates,
                others=self.others,
                tree=(
                    None
                    if previous is None or self._guided_view is None
                    else mcts.subtree(previous, self._guided_view, observation)
                ),
                settle=True,
            )
            self.last_guided, self._guided_view = guided, observation
            return guided.option
        self.last = search(
            observation,
            self.evaluator,
            rng,
            simulations=self.simulations,
            budget_ms=self.budget_ms,
            exploration=self.exploration,
        )
        return self.last.option

    async def choose(self, observation: WireObservation) -> Choice:
        return await mcts.choose_by(observation, self.decide, in_thread=self.searches)
