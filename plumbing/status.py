"""A refusal on the wire: its ``RejectReason`` and the call status's ``google.rpc.ErrorInfo`` details.

Every refusal of the game server and the arena carries, in the ``grpc-status-details-bin`` trailer, a
``google.rpc.Status`` whose ``ErrorInfo`` has the domain ``kutnahora.v1`` and a reason a program can act on
(the ``RejectReason``'s name without its prefix). A refusal that passes with time (a quota, a rate, an
overloaded server) also carries a ``google.rpc.RetryInfo`` with the delay after which to ask again.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from kutnahora.plumbing.errors import Reason, ServiceError
from kutnahora.v1 import game_pb2

REJECT_REASONS: dict[Reason, Any] = {
    Reason.STALE_VERSION: game_pb2.REJECT_REASON_STALE_VERSION,
    Reason.NOT_YOUR_TURN: game_pb2.REJECT_REASON_NOT_YOUR_TURN,
    Reason.NOT_AN_OPTION: game_pb2.REJECT_REASON_NOT_AN_OPTION,
    Reason.GAME_NOT_ACTIVE: game_pb2.REJECT_REASON_GAME_NOT_ACTIVE,
    Reason.MALFORMED: game_pb2.REJECT_REASON_MALFORMED,
    Reason.RATE_LIMITED: game_pb2.REJECT_REASON_RATE_LIMITED,
    Reason.NOT_FOUND: game_pb2.REJECT_REASON_NOT_FOUND,
    Reason.UNAUTHENTICATED: game_pb2.REJECT_REASON_UNAUTHENTICATED,
    Reason.PERMISSION_DENIED: game_pb2.REJECT_REASON_PERMISSION_DENIED,
    Reason.SEAT_TAKEN: game_pb2.REJECT_REASON_SEAT_TAKEN,
    Reason.GAME_FULL: game_pb2.REJECT_REASON_GAME_FULL,
    Reason.GAME_NOT_ENDED: game_pb2.REJECT_REASON_GAME_NOT_ENDED,
    Reason.COMPONENTS_MISMATCH: game_pb2.REJECT_REASON_COMPONENTS_MISMATCH,
    Reason.MAX_GAMES: game_pb2.REJECT_REASON_LIMIT_REACHED,
    Reason.MAX_WATCHERS: game_pb2.REJECT_REASON_LIMIT_REACHED,
    Reason.PROBE_STREAMS: game_pb2.REJECT_REASON_LIMIT_REACHED,
    Reason.MAX_PLAYERS: game_pb2.REJECT_REASON_LIMIT_REACHED,
    Reason.STORE_ERROR: game_pb2.REJECT_REASON_STORE_UNAVAILABLE,
    Reason.ENGINE_ERROR: game_pb2.REJECT_REASON_SERVER_FAULT,
    Reason.REBUILD_FAILED: game_pb2.REJECT_REASON_SERVER_FAULT,
    Reason.SERVER_FAULT: game_pb2.REJECT_REASON_SERVER_FAULT,
    Reason.UNKNOWN_POOL: game_pb2.REJECT_REASON_UNKNOWN_POOL,
    Reason.TICKET_EXISTS: game_pb2.REJECT_REASON_TICKET_EXISTS,
    Reason.NAME_TAKEN: game_pb2.REJECT_REASON_NAME_TAKEN,
    Reason.NAME_INVALID: game_pb2.REJECT_REASON_NAME_INVALID,
    Reason.KEY_REVOKED: game_pb2.REJECT_REASON_KEY_REVOKED,
    Reason.REQUEST_ID_REUSED: game_pb2.REJECT_REASON_REQUEST_ID_REUSED,
    Reason.CALLER_GAMES: game_pb2.REJECT_REASON_QUOTA_EXCEEDED,
    Reason.CALLER_RATE: game_pb2.REJECT_REASON_RATE_LIMITED,
    Reason.CALLER_STREAMS: game_pb2.REJECT_REASON_QUOTA_EXCEEDED,
    Reason.OVERLOADED: game_pb2.REJECT_REASON_OVERLOADED,
    Reason.SEAT_RATE: game_pb2.REJECT_REASON_RATE_LIMITED,
    Reason.STREAM_REPLACED: game_pb2.REJECT_REASON_STREAM_REPLACED,
    Reason.SUBMISSIONS_PER_DAY: game_pb2.REJECT_REASON_QUOTA_EXCEEDED,
    Reason.HOSTING_DISABLED: game_pb2.REJECT_REASON_PERMISSION_DENIED,
    Reason.BUILT_TOO_LARGE: game_pb2.REJECT_REASON_LIMIT_REACHED,
}
"""Each reason of a refusal as the wire names it: every ``RejectReason`` but UNSPECIFIED is one's."""

ERROR_DOMAIN = "kutnahora.v1"
"""The ``google.rpc.ErrorInfo.domain`` of every refusal."""
_LIMITS = {Reason.MAX_GAMES, Reason.MAX_WATCHERS, Reason.MAX_PLAYERS, Reason.PROBE_STREAMS}


def error_info_reason(error: ServiceError) -> str:
    """The ``ErrorInfo.reason`` of a refusal: its ``RejectReason``'s name without the prefix."""
    return str(game_pb2.RejectReason.Name(REJECT_REASONS[error.reason])).removeprefix("REJECT_REASON_")


def status_details(error: ServiceError) -> tuple[tuple[str, str | bytes], ...]:
    """The trailing metadata that carries a refusal's ``google.rpc.Status`` with its ``ErrorInfo``; the
    call must end with the same code and message."""
    info = error_details_pb2.ErrorInfo(reason=error_info_reason(error), domain=ERROR_DOMAIN)
    if error.reason in _LIMITS:
        info.metadata["limit"] = error.reason.value
    info.metadata.update(error.metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    if error.retry_after is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromTimedelta(timedelta(seconds=max(0.0, error.retry_after)))
        packed = any_pb2.Any()
        packed.Pack(retry)
        details.append(packed)
    status = status_pb2.Status(code=error.code.value[0], message=error.message, details=details)
    return tuple(rpc_status.to_status(status).trailing_metadata)
