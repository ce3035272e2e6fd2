"""A game's decisions replayed with the engine: the stored log, applied to the game held in memory when it
is loaded or catches up with other replicas, and past versions rebuilt from the history for replays.

Replaying is pure engine work and runs in worker threads where it takes a while.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kutnahora import engine
from kutnahora.engine import Event, GameOptions, GameState, Option, parse_option
from kutnahora.engine.components import ComponentSet
from kutnahora.engine.options import PendingDecision
from kutnahora.server.records import AppliedDecision, DecisionSource, canonical_text
from kutnahora.server.store import DecisionRow, StoreError


def replayed_decision(
    decision: DecisionRow,
    option: Option,
    pending: PendingDecision,
    events: Sequence[Event],
    game_over: bool,
) -> AppliedDecision:
    """A stored decision, once replayed. Its text is the one every record of the same option shares,
    where the stored text is that text."""
    text = canonical_text(option)
    return AppliedDecision(
        version=decision.seq,
        seat=decision.seat,
        option=option,
        text=text if text == decision.option else decision.option,
        source=DecisionSource(decision.source),
        think_ms=decision.think_ms,
        applied_at=decision.applied_at,
        game_over=game_over,
        options=pending.options,
        events=tuple(events),
        kind=pending.kind,
    )


def replay_log(game_id: str, state: GameState, decisions: Sequence[DecisionRow]) -> Iterator[AppliedDecision]:
    """Apply to ``state`` the stored decisions beyond its version, in order, yielding each once applied.

    Raises :class:`StoreError`, naming the game and the version, when the log does not continue the game:
    it is shorter than the game, or a decision is for another version or another seat, or is not an
    option's text, or the engine refuses it. The decisions before that one stay applied. Any other
    exception from the engine goes to the caller as it is.
    """
    held = state.version
    if held > len(decisions):
        raise StoreError(
            f"game {game_id}: this server holds version {held}, the store only has it up to {len(decisions)}"
        )
    for decision in decisions[held:]:
        version = state.version
        pending = state.pending
        try:
            if decision.seq != version:
                raise ValueError(f"it is numbered {decision.seq}")
            option = parse_option(decision.option)
            events = engine.apply(state, option, decision.seat)  # IllegalDecision: a ValueError
        except ValueError as error:
            raise StoreError(
                f"game {game_id}: stored decision {version} ({decision.option!r} by seat "
                f"{decision.seat}) does not replay: {error}"
            ) from None
        assert pending is not None  # the engine applied a decision, so one was pending
        yield replayed_decision(decision, option, pending, events, state.over)


def replay_to(
    options: GameOptions,
    seed: int,
    components: ComponentSet,
    history: Sequence[AppliedDecision],
    version: int,
) -> GameState:
    """The game's state at ``version``, rebuilt from its setup and the first decisions of ``history``."""
    state = engine.new_game(options, seed, components)
    for record in history[:version]:
        engine.apply(state, record.option, record.seat)
    return state


def replay_versions(
    options: GameOptions,
    seed: int,
    components: ComponentSet,
    history: Sequence[AppliedDecision],
    start: int,
    stop: int,
) -> Iterator[tuple[GameState, AppliedDecision | None, tuple[Event, ...]]]:
    """The states of versions ``start`` .. ``stop - 1``, each with the decision that led to it and its
    events (None and none for version 0). The state is shared between steps: read it before taking the
    next."""
    state = replay_to(options, seed, components, history, max(start - 1, 0))
    for version in range(start, stop):
        if version == 0:
            yield state, None, ()
            continue
        record = history[version - 1]
        events = tuple(engine.apply(state, record.option, record.seat))
        yield state, record, events
