"""What a finished game is worth to each seat, and short texts of a position and of a seat's view of it.

**Returns.** Every adapter pays the same terminal return: each seat compares itself with every other seat
by the rules' order (most points, then most groschen; docs/rules.md#r13) and scores +1 for each seat it beats
and −1 for each seat that beats it, divided by the number of other seats. A sole winner of a four-player
game gets +1, the last −1, and a seat tied with all others 0. The returns of a game sum to zero and lie
in [−1, 1]. There is no reward before the end.
"""

from __future__ import annotations

from kutnahora.engine import GameState, Observation, legal, option_text
from kutnahora.engine.text import describe_option


def returns(state: GameState) -> list[float]:
    """The terminal return of each seat (zeros while the game runs)."""
    if not state.over:
        return [0.0] * len(state.players)
    return ranked_returns([(p.points, p.groschen) for p in state.players])


def ranked_returns(keys: list[tuple[int, int]]) -> list[float]:
    """The terminal returns of a finished game from every seat's final (points, groschen)."""
    n = len(keys)
    out = []
    for seat in range(n):
        beats = sum(keys[seat] > keys[other] for other in range(n))
        beaten = sum(keys[seat] < keys[other] for other in range(n))
        out.append((beats - beaten) / (n - 1))
    return out


def position_text(state: GameState) -> str:
    """A few lines on a position: round, scores and groschen, and the decision with its options."""
    lines = [
        f"round {state.round}, {state.phase.value}, decision {state.version}",
        "  ".join(
            f"seat {p.seat}: {p.points} points, {p.groschen} groschen, reputation {p.reputation}"
            for p in state.players
        ),
    ]
    pending = state.pending
    if pending is None:
        lines.append(f"game over; returns {returns(state)}")
    else:
        lines.append(f"seat {pending.seat} decides {pending.kind.value}:")
        lines.extend(f"  {describe_option(state, pending.kind, o)}" for o in legal(state))
    return "\n".join(lines)


def observation_text(view: Observation) -> str:
    """A seat's (or a spectator's) view as a few lines, in the manner of :func:`position_text`.

    Only what the view holds is written: round and phase, every seat's points, groschen and reputation,
    the viewer's hand, the mine tiles it is choosing from, and the pending decision, with its options
    when the viewer owes it.
    """
    who = "spectator" if view.viewer is None else f"seat {view.viewer}"
    lines = [
        f"{who} sees round {view.round} of {view.rounds}, {view.phase}, decision {view.version}",
        "  ".join(
            f"seat {p.seat}: {p.points} points, {p.groschen} groschen, reputation {p.reputation}"
            for p in view.players
        ),
    ]
    if view.viewer is not None:
        own = view.players[view.viewer]
        lines.append(f"hand: cards {', '.join(map(str, own.hand)) or 'none'}")
        if view.drawn:
            lines.append(f"mine tiles to choose from: {', '.join(map(str, view.drawn))}")
    pending = view.pending
    if pending is None:
        lines.append(f"game over; scores {', '.join(map(str, view.scores))}")
    else:
        lines.append(f"seat {pending.seat} decides {pending.kind.value}" + (":" if pending.options else ""))
        lines.extend(f"  {option_text(o)}" for o in pending.options)
    return "\n".join(lines)
