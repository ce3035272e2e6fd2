"""Structured logs with structlog: JSON lines by default, a readable console renderer on request.

Request handlers bind ``game_id``, ``seat``, ``rpc`` and ``request_id`` into the context (contextvars, so
each RPC's task has its own), and every line logged while handling that request carries them. Game
lifecycle events are logged at info, refused submissions at warning with their reason. Tokens are never
logged: no handler binds one, and :func:`drop_secrets` removes any key that looks like one.

Libraries that log through the standard :mod:`logging` module (the PostgreSQL pool, asyncio) are
rendered the same way, with their logger's name, so every line of the stream parses alike.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

SECRET_KEYS = ("token", "authorization", "secret", "password")

_handler: logging.Handler | None = None  # the one this module put on the root logger


def drop_secrets(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A processor that removes any field whose name suggests a secret."""
    for key in [k for k in event if any(word in k.lower() for word in SECRET_KEYS)]:
        del event[key]
    return event


def configure(log_format: str = "json", level: str = "info", stream: TextIO | None = None) -> None:
    """Configure structlog for the process: ``json`` (default) or ``console`` lines, at ``level``."""
    if log_format not in ("json", "console"):
        raise ValueError(f"log format must be json or console, not {log_format!r}")
    numeric = logging.getLevelNamesMapping().get(level.upper())
    if numeric is None:
        raise ValueError(f"unknown log level {level!r}")
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if log_format == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        drop_secrets,
        structlog.processors.format_exc_info,
    ]
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
    _route_standard_logging(
        numeric, stream or sys.stderr, [structlog.stdlib.add_logger_name, *shared], renderer
    )


def _route_standard_logging(level: int, stream: TextIO, chain: list[Any], renderer: Any) -> None:
    """Render what other libraries log through :mod:`logging` as this module renders its own lines."""
    global _handler
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=chain,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root.addHandler(handler)
    root.setLevel(level)
    _handler = handler


def reset() -> None:
    """Undo :func:`configure`: structlog's defaults, and no handler of ours on the root logger."""
    global _handler
    structlog.reset_defaults()
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler = None


def get_logger() -> Any:
    """The server's logger."""
    return structlog.get_logger("kutnahora.server")
