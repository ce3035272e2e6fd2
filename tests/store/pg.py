"""PostgreSQL for tests: one throw-away schema per test on the machine's server, skipped when unreachable.

``KUTNAHORA_TEST_POSTGRES`` names the server and database (default: the local ``test`` database). Each
schema has a unique name (process id and a random suffix), so parallel runs never collide, and it is
dropped with everything in it when the test ends.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import pytest

BASE_URL = os.environ.get("KUTNAHORA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@cache
def unreachable_reason() -> str | None:
    """Why PostgreSQL cannot be used for tests, or None when it can."""
    try:
        import psycopg
    except ImportError as error:
        return f"psycopg is not installed ({error})"
    try:
        with psycopg.connect(BASE_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        return f"PostgreSQL is unreachable at {BASE_URL} ({str(error).strip()})"
    return None


def require_postgres() -> None:
    """Skips the calling test, with the reason, when PostgreSQL cannot be used."""
    reason = unreachable_reason()
    if reason is not None:
        pytest.skip(reason)


def schema_url(schema: str) -> str:
    """The test database's URL with ``schema`` as the only entry of the search path."""
    separator = "&" if "?" in BASE_URL else "?"
    return f"{BASE_URL}{separator}options=-csearch_path%3D{schema}"


@contextmanager
def fresh_schema(prefix: str = "kh_test") -> Iterator[str]:
    """Creates a unique schema, yields a URL whose tables land in it, and drops it afterwards."""
    import psycopg

    require_postgres()
    schema = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(BASE_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema_url(schema)
    finally:
        with psycopg.connect(BASE_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
