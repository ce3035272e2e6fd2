"""The engine's refusals of a decision, answered as the game server's :class:`ServiceError`."""

from __future__ import annotations

from kutnahora.engine import GameOver, IllegalDecision, NotAnOption, NotYourTurn
from kutnahora.plumbing.errors import Reason, ServiceError, precondition

ENGINE_REFUSALS: tuple[tuple[type[IllegalDecision], Reason], ...] = (
    (GameOver, Reason.GAME_NOT_ACTIVE),
    (NotYourTurn, Reason.NOT_YOUR_TURN),
    (NotAnOption, Reason.NOT_AN_OPTION),
)
"""The engine's refusals of a decision (:func:`kutnahora.engine.check`), each with the reason it is answered
with."""


def engine_refusal(game_id: str, error: IllegalDecision) -> ServiceError:
    """The refusal of a decision the engine does not accept now (FAILED_PRECONDITION), in the engine's own
    words: the game is over, another seat owes the decision, or the option is not listed. Any other
    :class:`~kutnahora.engine.IllegalDecision` (a refusal the engine may add later) is answered as an option
    that is not listed: the engine changed nothing either way."""
    reason = next(
        (reason for kind, reason in ENGINE_REFUSALS if isinstance(error, kind)), Reason.NOT_AN_OPTION
    )
    return precondition(f"game {game_id}: {error}", reason)
