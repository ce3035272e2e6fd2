"""A game that differs from another only in what the rules hide, for hidden-information tests."""

from __future__ import annotations

import random

from kutnahora.engine import GameState


def disguise(state: GameState, rng: random.Random, keep_drawn: bool) -> GameState:
    """A copy of ``state`` that differs only in what the rules hide (and, unless kept, the drawn tiles)."""
    other = state.copy()
    rng.shuffle(other.mine_stack)
    rng.shuffle(other.mine_discard)
    for row in other.town_hall:
        for stack in row:
            below = stack.tiles[:-1]
            rng.shuffle(below)
            stack.tiles[:-1] = below
    rng.shuffle(other.red_stack)
    future = other.events[other.round :]
    rng.shuffle(future)
    other.events[other.round :] = future
    other.rng = random.Random(rng.random())
    if not keep_drawn and other.drawn and other.mine_stack:
        # Swap the drawn tiles with tiles of the stack: the counts stay, the tiles change.
        count = min(len(other.drawn), len(other.mine_stack))
        other.drawn[:count], other.mine_stack[:count] = other.mine_stack[:count], other.drawn[:count]
    return other
