"""Refuse rather than degrade: whether the server is overloaded, from what slows the games under way.

Three signals, each a median over the last ``window`` seconds (and only once it has been sampling for that
long), and each with a threshold of its own (0 turns it off):

- **the event loop's lag** (:class:`kutnahora.plumbing.signals.LoopLag`, ten samples a second): a loop
  that cannot keep up wakes every sleeper late, so most samples are late, while one long stall (a
  collection, a slow callback) is one late sample among many and refuses nothing;
- **the process's CPU**, as a share of one core (sampled with the lag): the server's Python runs one
  thing at a time, so a process near a whole core has nothing left for the games under way. A flood of
  cheap calls (a bot reading its own game hundreds of times a second) slows every game several times over
  while each wake-up stays quick, so the lag alone never sees it; the CPU does;
- **the time decisions wait**, from a submission's arrival to its answer (each decision is a sample): the
  store's writes and the game's lock, which neither of the others shows.

The server is overloaded while any of them is past its threshold, and stops being so once all are back
under. While overloaded, the servicer refuses what would add games (CreateGame, and JoinGame, which fills
a waiting game and starts it) with RESOURCE_EXHAUSTED, reason OVERLOADED and a RetryInfo of the window;
the calls of games under way (Play, SubmitDecision, GetObservation, WatchGame, ResignSeat) go on.
"""

from __future__ import annotations

import statistics
from collections import deque

MAX_SAMPLES = 10_000
"""Most samples kept of each signal, whatever the window and the sampling interval."""


class _Signal:
    """The samples of one signal in the window, and their median, computed when asked (a sample is taken
    with every decision, and a median of thousands of samples per decision would cost more than the
    decision: a sample costs an append, a median is computed only when a refusal is considered)."""

    def __init__(self, threshold: float, window: float) -> None:
        self.threshold = threshold
        self.window = window
        self.samples: deque[tuple[float, float]] = deque(maxlen=MAX_SAMPLES)
        self._median = 0.0
        self._stale = False

    def add(self, at: float, value: float) -> None:
        samples = self.samples
        samples.append((at, value))
        while samples[0][0] < at - self.window:
            samples.popleft()
        self._stale = True

    @property
    def median(self) -> float:
        if self._stale:
            self._median = statistics.median(sample for _, sample in self.samples)
            self._stale = False
        return self._median

    def past(self) -> bool:
        return self.threshold > 0 and bool(self.samples) and self.median > self.threshold


class Overload:
    """The overload state, from samples; time is the samplers' clock, never read here.

    ``threshold``: the loop's lag in seconds; ``cpu``: the process's share of one core; ``decision``: the
    seconds a decision waits; each 0 for off."""

    def __init__(self, threshold: float, window: float, cpu: float = 0.0, decision: float = 0.0) -> None:
        self.threshold = threshold
        self.window = window
        self._lag = _Signal(threshold, window)
        self._cpu = _Signal(cpu, window)
        self._decision = _Signal(decision, window)
        self._first: float | None = None
        self._last = 0.0
        self._cpu_mark: tuple[float, float] | None = None

    @property
    def on(self) -> bool:
        return self.threshold > 0 or self._cpu.threshold > 0 or self._decision.threshold > 0

    def _update(self, at: float) -> None:
        if self._first is None:
            self._first = at
        self._last = at

    def observe(self, at: float, lag: float) -> None:
        """One lag sample (seconds) taken at ``at`` (seconds on the sampler's clock)."""
        if not self.on:
            return
        if self.threshold > 0:
            self._lag.add(at, lag)
        self._update(at)

    def observe_cpu(self, at: float, cpu_seconds: float) -> None:
        """The process's CPU time (seconds, a running total) read at ``at``: the share of a core it used
        since the last reading is a sample."""
        if self._cpu.threshold <= 0:
            return
        mark, self._cpu_mark = self._cpu_mark, (at, cpu_seconds)
        if mark is not None and at > mark[0]:
            self._cpu.add(at, (cpu_seconds - mark[1]) / (at - mark[0]))
            self._update(at)

    def observe_decision(self, at: float, seconds: float) -> None:
        """A decision answered at ``at`` after waiting ``seconds`` since it arrived."""
        if self._decision.threshold <= 0:
            return
        self._decision.add(at, seconds)
        self._update(at)

    def overloaded(self) -> bool:
        """Whether new games are refused now (the medians are computed here, not with each sample)."""
        if self._first is None or self._last - self._first < self.window:
            return False
        return self._lag.past() or self._cpu.past() or self._decision.past()

    def lag(self) -> float:
        """The median lag of the last window, in seconds."""
        return self._lag.median

    def cpu(self) -> float:
        """The median share of a core the process used over the last window."""
        return self._cpu.median

    def decision_wait(self) -> float:
        """The median seconds a decision waited over the last window."""
        return self._decision.median

    def why(self) -> str:
        """What is past its threshold, in words."""
        reasons = []
        if self._lag.past():
            reasons.append(
                f"its event loop's median lag over the last {self.window:g} s is {self.lag() * 1000:.0f} ms, "
                f"past its {self.threshold * 1000:g} ms"
            )
        if self._cpu.past():
            reasons.append(
                f"it used a median {self.cpu() * 100:.0f}% of a core over the last {self.window:g} s, past "
                f"its {self._cpu.threshold * 100:g}%"
            )
        if self._decision.past():
            reasons.append(
                f"decisions waited a median {self.decision_wait() * 1000:.0f} ms for their answer over the "
                f"last {self.window:g} s, past its {self._decision.threshold * 1000:g} ms"
            )
        return "; ".join(reasons) or "it was overloaded a moment ago"
