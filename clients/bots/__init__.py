"""The reference bots, by name: ``random`` (uniform over legal options), ``greedy`` (a one-step heuristic
over the observation and the component set), ``mcts`` (a tree search that simulates the game with the
engine as a library) and ``neural`` (a trained network, alone or guiding a search; it needs NumPy, from
the ``rl`` extra). :func:`make_bot` builds one from its name.

A search bot's budget may be part of its name: ``mcts:200`` searches 200 iterations per decision,
``mcts:500ms`` half a second; plain ``mcts`` uses :data:`~kutnahora.clients.bots.mcts.DEFAULT_ITERATIONS`.
``neural:200`` searches 200 simulations a decision with the network, ``neural:150ms`` for 150 ms; plain
``neural`` plays the network's policy without a search. ``neural-mcts:100`` is the search bot's search,
100 iterations, among the network's favourite options only
(:func:`kutnahora.clients.bots.neural.guided_search`); plain ``neural-mcts`` searches
:data:`~kutnahora.clients.bots.mcts.DEFAULT_ITERATIONS` iterations.
"""

from __future__ import annotations

from collections.abc import Callable

from kutnahora.clients.bots.greedy import GreedyBot
from kutnahora.clients.bots.mcts import MctsBot
from kutnahora.clients.bots.random_bot import RandomBot
from kutnahora.clients.sdk import Bot


def neural_bot(
    seed: int | None,
    simulations: int | None = None,
    budget_ms: float | None = None,
    candidates: int | None = None,
) -> Bot:
    """The neural bot (searching with ``simulations`` or ``budget_ms`` when given; with ``candidates``,
    the search bot's search among that many of the network's favourite options), imported when asked for:
    it needs NumPy, from the ``rl`` extra."""
    from kutnahora.clients.bots.neural import NeuralBot

    return NeuralBot(seed, simulations=simulations, budget_ms=budget_ms, candidates=candidates)


def neural_mcts_bot(seed: int | None, iterations: int | None = None, budget_ms: float | None = None) -> Bot:
    """The search bot's search among the network's favourite options (``neural-mcts``): ``iterations``
    (by default :data:`~kutnahora.clients.bots.mcts.DEFAULT_ITERATIONS` when no ``budget_ms`` is given)."""
    from kutnahora.clients.bots.mcts import DEFAULT_ITERATIONS
    from kutnahora.clients.bots.neural import TOP

    if iterations is None and budget_ms is None:
        iterations = DEFAULT_ITERATIONS
    return neural_bot(seed, iterations, budget_ms, candidates=TOP)


BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "mcts": MctsBot,
    "neural": neural_bot,
    "neural-mcts": neural_mcts_bot,
}
"""Every built-in bot by name; each takes a seed (None: unseeded)."""


SEARCHERS = ("mcts", "neural", "neural-mcts")
"""The bots whose name may carry a search budget (``mcts:200``, ``neural:150ms``, ``neural-mcts:100``)."""


def mcts_budget(text: str) -> tuple[int | None, float | None]:
    """A budget as written after ``mcts:``: ``200`` iterations, or ``500ms`` milliseconds."""
    try:
        if text.endswith("ms"):
            budget_ms = float(text[:-2])
            if budget_ms > 0:
                return None, budget_ms
        else:
            iterations = int(text)
            if iterations > 0:
                return iterations, None
    except ValueError:
        pass
    raise ValueError(
        f"an mcts budget is a number of iterations (mcts:200) or milliseconds (mcts:500ms), not {text!r}"
    )


def is_bot(name: str) -> bool:
    """Whether ``name`` names a built-in bot (``mcts:200`` included)."""
    if name in BOTS:
        return True
    kind, sep, budget = name.partition(":")
    if kind not in SEARCHERS or not sep:
        return False
    try:
        mcts_budget(budget)
    except ValueError:
        return False
    return True


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A new bot of the named kind; ``KeyError`` names the known kinds when the name is unknown."""
    kind, sep, budget = name.partition(":")
    if kind in SEARCHERS and sep:
        try:
            iterations, budget_ms = mcts_budget(budget)
        except ValueError as error:
            raise KeyError(str(error).replace("an mcts budget", f"a {kind} budget")) from None
        if kind == "neural":
            return neural_bot(seed, iterations, budget_ms)
        if kind == "neural-mcts":
            return neural_mcts_bot(seed, iterations, budget_ms)
        return MctsBot(seed, iterations=iterations, budget_ms=budget_ms)
    try:
        factory = BOTS[name]
    except KeyError:
        known = ", ".join(sorted(BOTS))
        raise KeyError(
            f"unknown bot {name!r}; the built-in bots are {known} "
            "(and mcts:BUDGET, neural:BUDGET, neural-mcts:BUDGET)"
        ) from None
    return factory(seed)


__all__ = [
    "BOTS",
    "GreedyBot",
    "MctsBot",
    "RandomBot",
    "is_bot",
    "make_bot",
    "mcts_budget",
    "neural_bot",
    "neural_mcts_bot",
]
