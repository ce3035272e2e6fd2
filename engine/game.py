"""The engine's public API: start a game, list legal options, apply one, see, score and replay.

``apply`` is the only way a game changes: it checks the option against the pending decision first and
raises an :class:`IllegalDecision` (leaving the state untouched) when it is not listed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum

from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.component_file import default_components
from kutnahora.engine.components import ComponentSet
from kutnahora.engine.events import Event
from kutnahora.engine.flow import resolve, run
from kutnahora.engine.options import Option, PendingDecision, option_text
from kutnahora.engine.scoring import winners
from kutnahora.engine.state import GameOptions, GameState


class IllegalDecision(ValueError):
    """A decision that the game does not accept now; the state is unchanged."""


class GameOver(IllegalDecision):
    """The game has ended: no decision is accepted."""


class NotYourTurn(IllegalDecision):
    """The decision is owed by another seat."""


class NotAnOption(IllegalDecision):
    """The option is not one of the pending decision's legal options."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """The final result: scores by seat, their breakdown, groschen left, and the winners."""

    scores: tuple[int, ...]
    groschen: tuple[int, ...]
    winners: tuple[int, ...]
    breakdown: tuple[dict[str, int], ...]


def new_game(options: GameOptions, seed: int, components: ComponentSet | None = None) -> GameState:
    """Set up a game from its options and seed; the first decision is pending."""
    from kutnahora.engine.setup import setup_state

    state = setup_state(components or default_components(), options, seed)
    run(state, [])
    return state


def pending(state: GameState) -> PendingDecision | None:
    """The decision the game waits for, or None when it is over."""
    return state.pending


def legal(state: GameState) -> tuple[Option, ...]:
    """Every legal option of the pending decision, in a fixed order; empty once the game is over."""
    return state.pending.options if state.pending is not None else ()


def owed(state: GameState, seat: int | None = None) -> PendingDecision:
    """The pending decision, owed by ``seat`` (when given).

    Raises :class:`GameOver` when the game is over and :class:`NotYourTurn` when another seat owes it.
    """
    decision = state.pending
    if decision is None:
        raise GameOver("the game is over; no decision is accepted")
    if seat is not None and seat != decision.seat:
        raise NotYourTurn(f"seat {decision.seat} owes the next decision ({decision.kind}), not seat {seat}")
    return decision


def check(state: GameState, option: Option, seat: int | None = None) -> PendingDecision:
    """What :func:`apply` checks before it changes anything, without applying: the pending decision, owed by
    ``seat`` (when given), which lists ``option``.

    Raises :class:`GameOver`, :class:`NotYourTurn` or :class:`NotAnOption` (each an
    :class:`IllegalDecision`).
    """
    decision = owed(state, seat)
    if option not in decision.options:
        listed = ", ".join(option_text(o) for o in decision.options[:12])
        more = "…" if len(decision.options) > 12 else ""
        raise NotAnOption(
            f"{option_text(option) if _is_option(option) else option!r} is not a legal answer to "
            f"{decision.kind}; legal: {listed}{more}"
        )
    return decision


def apply(state: GameState, option: Option, seat: int | None = None) -> list[Event]:
    """Apply one legal option (for ``seat``, when given) and return what happened.

    Raises a subclass of :class:`IllegalDecision` and changes nothing when the game is over, the seat
    does not owe the decision, or the option is not listed (:func:`check`).
    """
    check(state, option, seat)
    events: list[Event] = []
    resolve(state, option, events)
    return events


def _is_option(value: object) -> bool:
    try:
        option_text(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def result(state: GameState) -> GameResult | None:
    """The final result, once the game is over."""
    if not state.over or state.final_scores is None:
        return None
    seats = range(len(state.players))
    return GameResult(
        scores=tuple(state.players[s].points for s in seats),
        groschen=tuple(state.players[s].groschen for s in seats),
        winners=tuple(winners(state)),
        breakdown=tuple(state.final_scores[s] for s in seats),
    )


def replay(
    options: GameOptions, seed: int, decisions: Iterable[Option], components: ComponentSet | None = None
) -> GameState:
    """Rebuild a game from its options, seed and decisions (docs/rules.md#r14)."""
    state = new_game(options, seed, components)
    for option in decisions:
        apply(state, option)
    return state


def _canonical(value: object) -> object:
    """Plain JSON data for a state value: enums by value, dicts as sorted pairs, dataclasses by field."""
    if isinstance(value, Enum):
        return value.value
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_canonical(v) for v in value), key=json.dumps)
    if isinstance(value, dict):
        pairs = [[_canonical(k), _canonical(v)] for k, v in value.items()]
        return sorted(pairs, key=lambda pair: json.dumps(pair[0]))
    if is_dataclass(value):
        return {f.name: _canonical(getattr(value, f.name)) for f in fields(value)}
    raise TypeError(f"cannot canonicalise {type(value).__name__}")


_NOT_HASHED = frozenset(
    {
        "components",
        "rng",  # hashed by its state, above
        "mine_costs_cache",  # derived from the mines
        # what seats have seen of the mine tiles, not the position: two games in the same position hash
        # alike whoever saw what (and hashes recorded before these were kept stay valid)
        "mine_discards_seen",
        "mine_reshuffles",
    }
)


def state_hash(state: GameState) -> str:
    """A SHA-256 of the whole state, hidden parts and the generator included: equal states, equal hashes.

    The state is written as canonical JSON first, so the hash does not depend on Python's ``repr``.
    """
    parts: dict[str, object] = {"rng": _canonical(list(state.rng.getstate()))}
    for f in fields(state):
        if f.name not in _NOT_HASHED:
            parts[f.name] = _canonical(getattr(state, f.name))
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


_COMPONENT_NOTES = frozenset({"name", "reconstructed"})  # what a set says about itself, not rules values


def components_hash(components: ComponentSet) -> str:
    """A SHA-256 of the values of a component set (its name and notes aside): equal values, however their
    file was laid out, give equal hashes.

    A game is defined by its options, seed and decisions *and* the component set it was played with; a
    server records this hash with every game, so that a replay is checked against the right data.
    """
    return _component_hashes.get(components)


def _hash_components(components: ComponentSet) -> str:
    values = {
        f.name: _canonical(getattr(components, f.name))
        for f in fields(components)
        if f.name not in _COMPONENT_NOTES
    }
    text = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


_component_hashes: ComponentCache[str] = ComponentCache(_hash_components)
