"""Events: what just happened in a game, as public, readable facts.

``apply`` returns the events a decision caused. Events never carry hidden information (no stack order,
no tile another seat is choosing from), so a server may send them to every watcher.
"""

from __future__ import annotations

from dataclasses import dataclass

from kutnahora.engine.components import Action


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened: a short kind (``mine_placed``, ``tax``…), the seat it concerns, a sentence."""

    kind: str
    seat: int | None
    text: str


def plural(amount: int, noun: str) -> str:
    """``1 miner``, ``2 miners``: a count with its noun in the right number."""
    return f"{amount} {noun}" if amount == 1 else f"{amount} {noun}s"


def article(word: str) -> str:
    """``a miners``, ``an innkeepers``: the word with its indefinite article."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def action_words(action: Action) -> str:
    """An action in words: ``st_barbara`` is ``St. Barbara``, ``plot`` is ``Plot``."""
    return str(action).replace("_", " ").title().replace("St Barbara", "St. Barbara")
