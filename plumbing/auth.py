"""Secrets: seat tokens, game tokens and the admin token.

A token is 32 random bytes, URL-safe base64, never starting with ``-``. The server keeps only the SHA-256
of each token and compares hashes with :func:`hmac.compare_digest`, so neither the store nor the timing of
a refusal reveals a token.
Clients send a token in the ``authorization`` metadata entry as ``Bearer <token>`` (the scheme's case does
not matter, as in RFC 6750). A bare ``<token>`` is accepted too and means the same: a token never holds a
space, so the two cannot be confused, and people who type metadata by hand (grpcurl, buf curl) often leave
the scheme out. Tokens are never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Sequence

METADATA_KEY = "authorization"
SCHEME = "bearer "
QUOTA_KEY = "kutnahora-quota-token"
"""The metadata entry in which a service acting for many people (the web front end, the arena, a
tournament runner) sends the server's quota token beside the ``authorization`` a call needs for itself (a
visitor's seat token): its calls are then not counted by the per-caller quotas, whatever they prove."""


def new_token() -> str:
    """A fresh secret token, which never starts with ``-``: people pass tokens on command lines, where
    ``--token -x…`` would read as another option."""
    while True:
        token = secrets.token_urlsafe(32)
        if not token.startswith("-"):
            return token


def token_hash(token: str) -> str:
    """The SHA-256 (hex) of a token: what the server stores."""
    return hashlib.sha256(token.encode()).hexdigest()


def matches(token: str | None, stored_hash: str) -> bool:
    """Whether ``token`` hashes to ``stored_hash``, compared in constant time."""
    if not token or not stored_hash:
        return False
    return hmac.compare_digest(token_hash(token), stored_hash)


def matching_seat(token: str | None, seat_hashes: Sequence[str]) -> int | None:
    """The seat whose stored hash the token matches, or None; every seat is compared, whatever matches."""
    if not token:
        return None
    digest = token_hash(token)
    found: int | None = None
    for seat, stored in enumerate(seat_hashes):
        if stored and hmac.compare_digest(digest, stored) and found is None:
            found = seat
    return found


def token_from_metadata(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """The bearer token of a call's metadata, or None."""
    if metadata is None:
        return None
    for key, value in metadata:
        if key.lower() != METADATA_KEY:
            continue
        text = value.decode() if isinstance(value, bytes) else value
        if text[: len(SCHEME)].lower() == SCHEME:
            return text[len(SCHEME) :].strip() or None
        return text.strip() or None
    return None


def quota_token_from_metadata(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """The quota token of a call's metadata (:data:`QUOTA_KEY`), or None."""
    for key, value in metadata or ():
        if key.lower() == QUOTA_KEY:
            text = value.decode() if isinstance(value, bytes) else value
            return text.strip() or None
    return None
