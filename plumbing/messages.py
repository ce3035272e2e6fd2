"""Requests decoded from the bytes a caller sent, and responses serialised, for handlers that take raw bytes.

A method registered with its message classes fails inside gRPC, answered UNKNOWN, when a body does not
decode; the services register raw-bytes handlers instead and decode here, so that a stranger's bytes are
answered INVALID_ARGUMENT with a sentence and an ``ErrorInfo``, like every other bad request.
"""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import Message

from kutnahora.plumbing.errors import invalid

M = TypeVar("M", bound=Message)


def decode(request_class: type[M], body: bytes) -> M:
    """A request decoded from the bytes received; INVALID_ARGUMENT when they are not one."""
    try:
        return request_class.FromString(body)
    except Exception:  # protobuf's DecodeError, or whatever else a hostile body provokes while parsing
        name = request_class.DESCRIPTOR.full_name
        raise invalid(
            f"the request ({len(body)} bytes) is not a {name} message: it cannot be decoded"
        ) from None


def serialize(value: Message | bytes) -> bytes:
    """Serialise a response that may already be bytes."""
    if isinstance(value, bytes):
        return value
    return value.SerializeToString()
