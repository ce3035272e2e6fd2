"""The reference bots, by name: ``random`` (uniform over legal options) and ``greedy`` (a one-step
heuristic over the observation and the component set). :func:`make_bot` builds one from its name."""

from __future__ import annotations

from collections.abc import Callable

from kutnahora.clients.bots.greedy import GreedyBot
from kutnahora.clients.bots.random_bot import RandomBot
from kutnahora.clients.sdk import Bot

BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
}
"""Every built-in bot by name; each takes a seed (None: unseeded)."""


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A new bot of the named kind; ``KeyError`` names the known kinds when the name is unknown."""
    try:
        factory = BOTS[name]
    except KeyError:
        known = ", ".join(sorted(BOTS))
        raise KeyError(f"unknown bot {name!r}; the built-in bots are {known}") from None
    return factory(seed)


__all__ = ["BOTS", "GreedyBot", "RandomBot", "make_bot"]
