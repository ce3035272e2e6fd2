"""What becomes of a visitor's refusal (:class:`~kutnahora.web.limits.Refused`): it is counted, every one,
in ``kutnahora_web_refusals_total{limit}``, and logged at info, but not every one: a visitor flooding a
limit would otherwise flood the log.

A line is written for the first refusal of each visitor and limit in a window of :data:`WINDOW` seconds,
the next line of that visitor and limit saying how many were left out since (``left_out``); and at most
:data:`LINES` refusal lines are written a window in all, whatever the number of visitors, the next line
written saying how many of those were left out (``lines_left_out``). The log thus grows by a bounded
number of lines a minute however many requests are refused, from however many addresses. (The windows of
visitors and limits are kept for a thousand of them at most, as :class:`~kutnahora.plumbing.logs.LineBudget`
keeps its kinds: past that they start again, a visitor's ``left_out`` is forgotten, and only the overall
budget holds; the counter counts every refusal whatever the log says.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

from kutnahora.plumbing.logs import LineBudget
from kutnahora.web.metrics import WebMetrics

WINDOW = 60.0
"""Seconds in which one visitor's refusals by one limit are logged once."""
LINES = 100
"""Refusal lines written in a window at most, every visitor's together."""


class RefusalLog:
    """Count every refusal; log a few."""

    def __init__(
        self,
        metrics: WebMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        window: float = WINDOW,
        lines: int = LINES,
    ) -> None:
        self.metrics = metrics
        self._each = LineBudget(1, window, clock)  # per (visitor, limit)
        self._all = LineBudget(lines, window, clock)
        self.log: Any = structlog.get_logger("kutnahora.web")

    def refused(self, visitor: str, limit: str, retry_after: float) -> None:
        """A request of ``visitor`` was refused by ``limit``, to be asked again after ``retry_after`` s."""
        if self.metrics is not None:
            self.metrics.refused[limit].inc()
        left_out = self._each.take((visitor, limit))
        if left_out is None:
            return
        lines_left_out = self._all.take("refusal")
        if lines_left_out is None:
            return
        fields: dict[str, Any] = {"visitor": visitor, "limit": limit, "retry_after": round(retry_after, 1)}
        if left_out:
            fields["left_out"] = left_out  # this visitor's refusals by this limit not logged since its last
        if lines_left_out:
            fields["lines_left_out"] = lines_left_out  # refusal lines of any visitor left out since the last
        self.log.info("visitor refused", **fields)
