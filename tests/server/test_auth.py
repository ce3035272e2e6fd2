"""Seat and game tokens: what the server hands out, and what it keeps of them."""

from __future__ import annotations

import re

from kutnahora.plumbing import auth


def test_tokens_are_long_url_safe_and_never_look_like_an_option() -> None:
    """People paste tokens on command lines (``kutnahora-play --token TOKEN``), where one starting with
    ``-`` would be read as an option. A URL-safe token starts with ``-`` once in 64 draws."""
    tokens = [auth.new_token() for _ in range(5000)]
    assert len(set(tokens)) == len(tokens)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", token) for token in tokens)
    assert not [token for token in tokens if token.startswith("-")]


def test_only_the_hash_is_kept_and_it_matches_only_its_token() -> None:
    token = auth.new_token()
    stored = auth.token_hash(token)
    assert token not in stored and len(stored) == 64
    assert auth.matches(token, stored)
    assert not auth.matches(auth.new_token(), stored)
    assert not auth.matches("", stored) and not auth.matches(token, "")
    assert auth.matching_seat(token, ["", auth.token_hash("other"), stored]) == 2


def test_a_token_is_read_with_or_without_the_bearer_scheme() -> None:
    """``Bearer <token>`` (any case) and a bare ``<token>`` mean the same; an empty value is no token."""
    token = auth.new_token()
    for value in (f"Bearer {token}", f"bearer {token}", f"BEARER  {token} ", token, token.encode()):
        assert auth.token_from_metadata([("authorization", value)]) == token
    assert auth.token_from_metadata([("Authorization", f"Bearer {token}")]) == token
    for empty in ("", "Bearer ", "   "):
        assert auth.token_from_metadata([("authorization", empty)]) is None
    assert auth.token_from_metadata([("x-other", token)]) is None
    assert auth.token_from_metadata(None) is None
