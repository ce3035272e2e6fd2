"""What becomes of a visitor's refusal (:class:`~kutnahora.web.limits.Refused`): it is counted, every one,
in ``kutnahora_web_refusals_total{limit}``, and logged at info, but not every one: a visitor flooding a
limit, or a crowd of addresses, would otherwise flood the log. Which refusals are logged is
:class:`~kutnahora.plumbing.logs.RefusalLines`' rule, the arena's too: the first of each visitor and limit
in a window of a minute (its line saying how many were left out since, ``left_out``), and at most 100 lines
a minute in all (``lines_left_out``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

from kutnahora.plumbing.logs import REFUSAL_LINES, REFUSAL_WINDOW, RefusalLines
from kutnahora.web.metrics import WebMetrics

WINDOW = REFUSAL_WINDOW
"""Seconds in which one visitor's refusals by one limit are logged once."""
LINES = REFUSAL_LINES
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
        self._lines = RefusalLines(window, lines, clock)
        self.log: Any = structlog.get_logger("kutnahora.web")

    def refused(self, visitor: str, limit: str, retry_after: float) -> None:
        """A request of ``visitor`` was refused by ``limit``, to be asked again after ``retry_after`` s."""
        if self.metrics is not None:
            self.metrics.refused[limit].inc()
        counts = self._lines.take(visitor, limit)
        if counts is not None:
            self.log.info(
                "visitor refused", visitor=visitor, limit=limit, retry_after=round(retry_after, 1), **counts
            )
