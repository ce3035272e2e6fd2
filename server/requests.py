"""Requests safe to retry: a client-chosen ``request_id`` makes a second call return the first answer.

CreateGame, JoinGame and ResignSeat take an optional ``request_id`` (a UUID, as Google's API guidance,
AIP-155, recommends). The server stores, with the change the request made and in the same transaction, a
:class:`RequestRecord`: the SHA-256 of the request id (never the id itself), the method, a fingerprint of
the request (its deterministic encoding without the id) and the answer's secrets (game id, game token,
seat tokens, seat) sealed with AES-GCM under a key derived from the request id. So a retry, on this server
after a restart or on another replica, gets the same game, seat and tokens; and the store alone, without
the request id that only the client holds, reveals no token, as it reveals none elsewhere (it keeps only
token hashes).

The same request id with a different request (another method, game, seat, name or options) is refused
with ``request_id_reused``. A record is honoured for :data:`WINDOW` seconds after it was made; older ones
are ignored and, from time to time, deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from google.protobuf.message import Message

from kutnahora.plumbing.errors import ServiceError, invalid, precondition

WINDOW = 24 * 3600.0
"""Seconds for which a request id returns its first answer."""

NONCE_BYTES = 12


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """What the store keeps of one answered request (see the module's docstring)."""

    key_hash: str  # SHA-256 of the request id, hex
    method: str  # CreateGame | JoinGame | ResignSeat
    fingerprint: str  # SHA-256 of the request without its id, hex
    sealed: bytes  # nonce + AES-GCM ciphertext of the answer's fields, as JSON
    created_at: float  # Unix time in seconds


Sealer = Callable[[dict[str, Any]], RequestRecord]
"""Makes the record of the request being answered from the answer's fields (see :func:`seal`)."""


def request_id(request: Message) -> str | None:
    """The request's id in its canonical form (lower-case UUID), None when it has none; INVALID_ARGUMENT
    when it is not a UUID."""
    text: str = getattr(request, "request_id", "")
    if not text:
        return None
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise invalid(
            f"request_id must be a UUID, such as 123e4567-e89b-42d3-a456-426614174000; got {text[:64]!r}"
        ) from None


def key_hash(rid: str) -> str:
    """What the store keeps of a request id."""
    return hashlib.sha256(b"kutnahora request id\0" + rid.encode()).hexdigest()


def _key(rid: str) -> bytes:
    """The sealing key of a request id's answer (a different hash from :func:`key_hash`)."""
    return hashlib.sha256(b"kutnahora request key\0" + rid.encode()).digest()


def fingerprint(method: str, request: Message) -> str:
    """The request without its id, as a hash: a retry must send the same."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.ClearField("request_id")
    return hashlib.sha256(method.encode() + b"\0" + copy.SerializeToString(deterministic=True)).hexdigest()


def seal(rid: str, method: str, request: Message, answer: dict[str, Any], now: float) -> RequestRecord:
    """The record of ``request`` answered with ``answer`` (JSON-able fields)."""
    nonce = os.urandom(NONCE_BYTES)
    print_ = fingerprint(method, request)
    text = json.dumps(answer, sort_keys=True).encode()
    sealed = nonce + AESGCM(_key(rid)).encrypt(nonce, text, print_.encode())
    return RequestRecord(key_hash(rid), method, print_, sealed, now)


def answer_of(rid: str, method: str, request: Message, record: RequestRecord) -> dict[str, Any]:
    """The first answer's fields, when ``request`` repeats the request of ``record``; otherwise the refusal
    a reused request id gets."""
    if record.method != method or record.fingerprint != fingerprint(method, request):
        raise reused(record.method)
    nonce, body = record.sealed[:NONCE_BYTES], record.sealed[NONCE_BYTES:]
    try:
        text = AESGCM(_key(rid)).decrypt(nonce, body, record.fingerprint.encode())
    except InvalidTag:  # the record was not sealed with this id's key: not the same request
        raise reused(record.method) from None
    answer: dict[str, Any] = json.loads(text)
    return answer


def reused(method: str) -> ServiceError:
    """The refusal of a request id that answered another request."""
    return precondition(
        f"this request_id already answered a different {method} request; a new request needs a new "
        "request_id (the same request_id is only for retrying the very same request)",
        "request_id_reused",
    )


def live(record: RequestRecord | None, now: float) -> RequestRecord | None:
    """The record while it is honoured (younger than :data:`WINDOW`), else None."""
    if record is None or now - record.created_at > WINDOW:
        return None
    return record
