"""The errors the service answers with: a gRPC status code, a sentence, and a short reason.

Domain code raises :class:`ServiceError`; the servicers turn it into the call's status (unary calls) or a
``DecisionRejected`` message (the Play stream). ``reason`` labels the refusal in metrics and logs.
"""

from __future__ import annotations

import grpc

from kutnahora.v1 import game_pb2


class ServiceError(Exception):
    """A refusal: ``code`` is the gRPC status, ``message`` a sentence naming what was wrong."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason


def invalid(message: str) -> ServiceError:
    """A malformed request (INVALID_ARGUMENT)."""
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message, "malformed")


def not_found(game_id: str) -> ServiceError:
    """An unknown game (NOT_FOUND)."""
    return ServiceError(grpc.StatusCode.NOT_FOUND, f"there is no game {game_id!r}", "not_found")


def precondition(message: str, reason: str) -> ServiceError:
    """A request that is well formed but not possible now (FAILED_PRECONDITION)."""
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message, reason)


def stale(message: str) -> ServiceError:
    """A submission for another state version (ABORTED)."""
    return ServiceError(grpc.StatusCode.ABORTED, message, "stale_version")


def unauthenticated(message: str) -> ServiceError:
    """A missing or unknown token (UNAUTHENTICATED)."""
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, message, "unauthenticated")


def denied(message: str) -> ServiceError:
    """A valid token used for what it does not allow (PERMISSION_DENIED)."""
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, message, "permission_denied")


def exhausted(message: str, reason: str) -> ServiceError:
    """A limit reached (RESOURCE_EXHAUSTED)."""
    return ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, message, reason)


REJECT_REASONS: dict[str, game_pb2.RejectReason] = {
    "stale_version": game_pb2.REJECT_REASON_STALE_VERSION,
    "not_your_turn": game_pb2.REJECT_REASON_NOT_YOUR_TURN,
    "not_an_option": game_pb2.REJECT_REASON_NOT_AN_OPTION,
    "game_not_active": game_pb2.REJECT_REASON_GAME_NOT_ACTIVE,
    "malformed": game_pb2.REJECT_REASON_MALFORMED,
    "rate_limited": game_pb2.REJECT_REASON_RATE_LIMITED,
}


def reject_reason(error: ServiceError) -> game_pb2.RejectReason:
    """The ``RejectReason`` of a refusal sent on the Play stream."""
    return REJECT_REASONS.get(error.reason, game_pb2.REJECT_REASON_UNSPECIFIED)
