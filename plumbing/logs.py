"""Structured logs with structlog: JSON lines by default, a readable console renderer on request.

Request handlers bind ``game_id``, ``seat``, ``rpc`` and ``request_id`` into the context (contextvars, so
each RPC's task has its own), and every line logged while handling that request carries them. Game
lifecycle events are logged at info, refused submissions at warning with their reason. Tokens are never
logged: no handler binds one, and :func:`drop_secrets` removes any key that looks like one.

Libraries that log through the standard :mod:`logging` module (the PostgreSQL pool, asyncio) are
rendered the same way, with their logger's name, so every line of the stream parses alike.

A client cannot make the log large: :func:`clip_values` cuts every text field of a line (a traceback
excepted) to :data:`FIELD_LIMIT` characters, and :class:`LineBudget` lets the servicers log at most a few
refusals of one kind per interval, saying how many it left out.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Hashable, MutableMapping
from typing import Any, TextIO

import structlog

SECRET_KEYS = ("token", "authorization", "secret", "password")
FIELD_LIMIT = 300
"""The longest text field of a log line (a traceback excepted)."""

_handler: logging.Handler | None = None  # the one this module put on the root logger


def drop_secrets(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A processor that removes any field whose name suggests a secret."""
    for key in [k for k in event if any(word in k.lower() for word in SECRET_KEYS)]:
        del event[key]
    return event


def clip_values(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A processor that cuts every text field longer than :data:`FIELD_LIMIT` (a traceback excepted)."""
    for key, value in event.items():
        if isinstance(value, str) and len(value) > FIELD_LIMIT and key != "exception":
            event[key] = f"{value[:FIELD_LIMIT]}… ({len(value)} characters)"
    return event


class LineBudget:
    """At most ``burst`` lines of each kind per ``interval`` seconds.

    :meth:`take` says whether a line of a kind may be written now, and how many of that kind were left out
    since the last one written, so that the next line written can say so.
    """

    def __init__(
        self, burst: int = 10, interval: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.burst = burst
        self.interval = interval
        self.clock = clock
        self._kinds: dict[Hashable, list[float | int]] = {}  # kind -> [window start, written, left out]

    def take(self, kind: Hashable) -> int | None:
        """None when a line of ``kind`` must be left out now; else how many were left out before it."""
        now = self.clock()
        entry = self._kinds.get(kind)
        if entry is None or now - entry[0] >= self.interval:
            left_out = int(entry[2]) if entry is not None else 0
            if len(self._kinds) >= 1000:  # many kinds: forget the old windows rather than grow
                self._kinds.clear()
            self._kinds[kind] = [now, 1, 0]
            return left_out
        if entry[1] < self.burst:
            entry[1] += 1
            left_out, entry[2] = int(entry[2]), 0
            return left_out
        entry[2] += 1
        return None


REFUSAL_WINDOW = 60.0
"""Seconds in which one caller's refusals by one limit are logged once."""
REFUSAL_LINES = 100
"""Refusal lines written in a window at most, every caller's together."""


class RefusalLines:
    """Which refusals of a service's per-caller limits to log, so that a flood of them, from one caller or
    from a crowd of addresses, cannot flood the log: the first refusal of each caller and limit in a window
    of ``window`` seconds, and at most ``lines`` refusal lines a window in all. Each line written says how
    many it stands for (:meth:`take`). (The windows of callers and limits are kept for a thousand of them
    at most, as :class:`LineBudget` keeps its kinds: past that they start again, and only the overall
    budget holds.)"""

    def __init__(
        self,
        window: float = REFUSAL_WINDOW,
        lines: int = REFUSAL_LINES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._each = LineBudget(1, window, clock)  # per (caller, limit)
        self._all = LineBudget(lines, window, clock)

    def take(self, caller: str, limit: str) -> dict[str, int] | None:
        """None when this refusal is not to be logged; else the fields its line adds: ``left_out``, the
        caller's refusals by this limit not logged since its last line, and ``lines_left_out``, the refusal
        lines of any caller left out since the last one written (each only when not 0)."""
        left_out = self._each.take((caller, limit))
        if left_out is None:
            return None
        lines_left_out = self._all.take("refusal")
        if lines_left_out is None:
            return None
        counts = {"left_out": left_out, "lines_left_out": lines_left_out}
        return {name: count for name, count in counts.items() if count}


class NamedPrintLogger(structlog.PrintLogger):
    """structlog's line printer, holding the name it was asked for (``structlog.get_logger(name)``)."""

    def __init__(self, file: TextIO, name: str | None) -> None:
        super().__init__(file)
        self.name = name


class NamedPrintLoggerFactory:
    """Makes a :class:`NamedPrintLogger` on ``file`` for each name asked for."""

    def __init__(self, file: TextIO) -> None:
        self.file = file

    def __call__(self, *args: Any) -> NamedPrintLogger:
        return NamedPrintLogger(self.file, str(args[0]) if args else None)


def name_the_logger(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Add the logger's name as ``logger`` (``kutnahora.server``, ``kutnahora.arena``), as a line another
    library logs through :mod:`logging` carries its logger's name."""
    name = getattr(logger, "name", None)
    if name:
        event_dict.setdefault("logger", name)
    return event_dict


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
        clip_values,
        structlog.processors.format_exc_info,
    ]
    structlog.configure(
        processors=[name_the_logger, *shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=NamedPrintLoggerFactory(stream or sys.stderr),
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


def get_logger(service: str) -> Any:
    """The logger of a service (``kutnahora.server``, ``kutnahora.arena``): each of its lines names it as
    ``logger``, as a line another library logs through :mod:`logging` names that library's logger."""
    return structlog.get_logger(service)
