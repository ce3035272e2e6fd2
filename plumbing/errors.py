"""The errors the service answers with: a gRPC status code, a sentence, and a short reason.

Shared by the game server and the arena. Domain code raises :class:`ServiceError`; the servicers turn it
into the call's status (unary calls, with the details of :mod:`kutnahora.plumbing.status`) or, on the game
server's Play stream, a ``DecisionRejected`` message. ``reason`` (a :class:`Reason`) labels the refusal in
metrics and logs and maps to the wire's ``RejectReason``, which a client reads from the
``DecisionRejected`` or from the ``google.rpc.ErrorInfo`` in the call status's details.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

import grpc


class Reason(StrEnum):
    """Why a request was refused: the label of metrics and log lines. Several may share one wire reason
    (``max_games``, ``max_watchers``, ``max_players`` and ``probe_streams`` are all ``LIMIT_REACHED``)."""

    STALE_VERSION = "stale_version"
    NOT_YOUR_TURN = "not_your_turn"
    NOT_AN_OPTION = "not_an_option"
    GAME_NOT_ACTIVE = "game_not_active"
    MALFORMED = "malformed"
    RATE_LIMITED = "rate_limited"
    NOT_FOUND = "not_found"
    UNAUTHENTICATED = "unauthenticated"
    PERMISSION_DENIED = "permission_denied"
    SEAT_TAKEN = "seat_taken"
    GAME_FULL = "game_full"
    GAME_NOT_ENDED = "game_not_ended"
    COMPONENTS_MISMATCH = "components_mismatch"
    MAX_GAMES = "max_games"
    MAX_WATCHERS = "max_watchers"
    MAX_PLAYERS = "max_players"
    PROBE_STREAMS = "probe_streams"
    STORE_ERROR = "store_error"
    ENGINE_ERROR = "engine_error"
    REBUILD_FAILED = "rebuild_failed"
    SERVER_FAULT = "server_fault"
    UNKNOWN_POOL = "unknown_pool"
    TICKET_EXISTS = "ticket_exists"
    NAME_TAKEN = "name_taken"
    NAME_INVALID = "name_invalid"
    KEY_REVOKED = "key_revoked"
    REQUEST_ID_REUSED = "request_id_reused"
    CALLER_GAMES = "caller_games"
    CALLER_RATE = "caller_rate"
    CALLER_STREAMS = "caller_streams"
    OVERLOADED = "overloaded"
    SEAT_RATE = "seat_rate"
    STREAM_REPLACED = "stream_replaced"
    SUBMISSIONS_PER_DAY = "submissions_per_day"
    HOSTING_DISABLED = "hosting_disabled"
    BUILT_TOO_LARGE = "built_too_large"


ECHO_LIMIT = 100
"""How many characters of a client's value a refusal or a log line repeats."""

MESSAGE_LIMIT = 1000
"""The longest refusal sentence sent: far below gRPC's metadata limits, whatever went into it."""


def clip(value: str, limit: int = ECHO_LIMIT) -> str:
    """A client's value as a refusal or a log line may repeat it: cut to ``limit`` characters, saying how
    long it was."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}… ({len(value)} characters)"


class ServiceError(Exception):
    """A refusal: ``code`` is the gRPC status, ``message`` a sentence naming what was wrong (cut to
    :data:`MESSAGE_LIMIT` characters; values it quotes from the request are cut with :func:`clip`).

    ``retry_after`` (seconds), when set, is sent as a ``google.rpc.RetryInfo`` detail: how long the caller
    should wait before it asks again. ``metadata`` goes into the ``ErrorInfo``'s metadata (short texts).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str,
        *,
        retry_after: float | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        message = clip(message, MESSAGE_LIMIT)
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = Reason(reason)  # an unknown reason fails here, where it is raised
        self.retry_after = retry_after
        self.metadata = {key: clip(value) for key, value in (metadata or {}).items()}


def invalid(message: str) -> ServiceError:
    """A malformed request (INVALID_ARGUMENT)."""
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message, "malformed")


def not_found(game_id: str) -> ServiceError:
    """An unknown game (NOT_FOUND)."""
    return ServiceError(grpc.StatusCode.NOT_FOUND, f"there is no game {clip(game_id)!r}", "not_found")


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


def exhausted(
    message: str,
    reason: str,
    *,
    retry_after: float | None = None,
    metadata: Mapping[str, str] | None = None,
) -> ServiceError:
    """A limit reached (RESOURCE_EXHAUSTED), with the delay after which asking again may succeed."""
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED, message, reason, retry_after=retry_after, metadata=metadata
    )


def conflict(message: str, reason: str) -> ServiceError:
    """Something that exists already (ALREADY_EXISTS), such as a taken seat."""
    return ServiceError(grpc.StatusCode.ALREADY_EXISTS, message, reason)


def store_unavailable(message: str) -> ServiceError:
    """The game store could not be reached, so nothing changed (UNAVAILABLE): the caller may retry."""
    return ServiceError(grpc.StatusCode.UNAVAILABLE, message, "store_error")


def engine_failed(message: str) -> ServiceError:
    """The rules engine failed on a listed option (INTERNAL): a fault of the server, not the caller."""
    return ServiceError(grpc.StatusCode.INTERNAL, message, "engine_error")


def server_fault(message: str) -> ServiceError:
    """An unexpected fault of the server (INTERNAL)."""
    return ServiceError(grpc.StatusCode.INTERNAL, message, "server_fault")


class StartupError(Exception):
    """A service could not start; the message says why in a sentence."""


class StoreError(RuntimeError):
    """A database operation failed; the message says which and why."""
