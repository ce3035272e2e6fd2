"""What one hosted bot may cost the runner through its seat gateways, and what it did cost.

Every seat a submission plays has a :class:`~kutnahora.hosting.gateway.SeatGateway` of its own;
the gateways of one submission share one :class:`BotBudget`, so that its bounds hold for the bot as a
whole, however many seats and games it plays at once:

* **calls in flight** (``calls``): unary calls being forwarded, together; one more is refused;
* **bytes in flight** (``bytes_in_flight``): requests and answers the gateways hold for it, together;
* **a call rate** (``rate``, ``burst``): a token bucket of unary calls and Play messages. An accepted
  ``SubmitDecision`` gives its token back, and so does each turn the server sends on a Play stream
  (the decision it owes), so a bot that plays is never slowed by its own moves; a loop of reads is.
  Past it a unary call is refused, a Play message waits for its token;
* **the runner's CPU** (``cpu_share``, of one core): the time the runner's event loop spends on the
  bot's calls is measured step by step (:func:`metered`); while the bot has spent more than its share,
  its next calls wait, so a flood costs the runner at most that share;
* **refusals** cost the runner too: after the first ``free_refusals``, they are answered one at a time,
  ``refusal_pace`` seconds apart.

Per seat gateway: at most ``connections`` connections from the bot (gRPC's
``grpc.max_allowed_incoming_connections``), ``calls_per_connection`` calls on each, and messages of at
most ``message_bytes`` (never more than the server accepts: the gateway reads the server's
``max_message_bytes`` when it starts). A refusal is ``RESOURCE_EXHAUSTED`` with a
``google.rpc.ErrorInfo`` (``RATE_LIMITED``, or ``LIMIT_REACHED`` with ``metadata["limit"]``) and a
``google.rpc.RetryInfo``. The memory the runner holds for one bot is therefore bounded by
``connections`` x ``calls_per_connection`` x ``message_bytes`` per seat (what gRPC may have read before
a handler refuses), and at most ``bytes_in_flight`` once its calls are taken in.

:class:`Usage` is what a bot did cost, exported per submission in the results file (``hosting``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Generator
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

MIB = 1 << 20
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class GatewayLimits:
    """The bounds of one hosted bot's gateways (see the module's docstring)."""

    connections: int = 16
    calls_per_connection: int = 16
    calls: int = 16
    bytes_in_flight: int = 8 * MIB
    message_bytes: int = 1 * MIB
    rate: float = 50.0
    burst: int = 100
    stream_rate: float = 1.0
    stream_burst: int = 10
    cpu_share: float = 0.25
    free_refusals: int = 100
    refusal_pace: float = 0.02

    def describe(self) -> str:
        """One line for the runner's first lines."""
        return (
            f"gateway: {self.connections} connections x {self.calls_per_connection} calls per seat, "
            f"{self.calls} calls and {self.bytes_in_flight // MIB} MiB in flight per bot, messages of "
            f"{self.message_bytes // 1024} KiB, {self.rate:g} calls/s (burst {self.burst}), "
            f"{self.stream_rate:g} Play streams/s per seat, {self.cpu_share:g} of a core of the runner"
        )


@dataclass(slots=True)
class Usage:
    """What one bot cost the runner, over every seat it played."""

    calls: int = 0  # unary calls and Play streams forwarded to the server
    play_messages: int = 0  # messages the bot sent on its Play streams, forwarded
    refused: dict[str, int] = field(default_factory=dict)  # calls refused by the gateways, by why
    bytes_up: int = 0  # bytes the bot sent, forwarded
    bytes_down: int = 0  # bytes of answers passed back to it
    most_calls: int = 0  # the most unary calls in flight at once
    most_bytes: int = 0  # the most bytes in flight at once
    cpu_seconds: float = 0.0  # the runner's CPU spent on its calls
    waited_seconds: float = 0.0  # how long its calls waited for their rate or CPU share
    streams_taken_over: int = 0  # Play streams ended because a newer one of the same seat took over

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cpu_seconds"] = round(self.cpu_seconds, 4)
        data["waited_seconds"] = round(self.waited_seconds, 3)
        data["refused"] = dict(sorted(self.refused.items()))
        return data


class Bucket:
    """A token bucket: ``rate`` a second, ``burst`` at once (``rate`` 0: no limit)."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = max(1.0, float(burst))
        self.tokens = self.burst
        self.stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, cost: float = 1.0) -> float:
        """Take ``cost`` and return 0.0; or take nothing and return the seconds until it could."""
        if self.rate <= 0:
            return 0.0
        self._refill()
        if self.tokens >= cost:
            self.tokens -= cost
            return 0.0
        return (cost - self.tokens) / self.rate

    def charge(self, cost: float) -> None:
        """Take ``cost`` even into debt (spent already)."""
        if self.rate > 0:
            self._refill()
            self.tokens -= cost

    def give_back(self, cost: float = 1.0) -> None:
        if self.rate > 0:
            self.tokens = min(self.burst, self.tokens + cost)

    def debt(self) -> float:
        """Seconds until the bucket is out of debt (0.0 when it is not)."""
        if self.rate <= 0:
            return 0.0
        self._refill()
        return max(0.0, -self.tokens / self.rate)


class Refusal(Exception):
    """A call the bot's bounds refuse: RESOURCE_EXHAUSTED with ``reason``, ``limit`` and a delay."""

    def __init__(self, message: str, reason: str, limit: str, retry_after: float) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.limit = limit
        self.retry_after = retry_after


class BotBudget:
    """The shared bounds and usage of one hosted bot's gateways."""

    def __init__(self, name: str, limits: GatewayLimits | None = None) -> None:
        self.name = name
        self.limits = limits or GatewayLimits()
        self.usage = Usage()
        self.in_flight = 0
        self.bytes = 0
        self.calls = Bucket(self.limits.rate, self.limits.burst)
        # The runner's CPU: ``cpu_share`` seconds a second, one second of it at once.
        self.cpu = Bucket(self.limits.cpu_share, 1.0)
        self.pacing = asyncio.Lock()
        self.refusals = 0

    # --- bounds ---------------------------------------------------------------------------------------

    def refused(self, why: str) -> None:
        self.usage.refused[why] = self.usage.refused.get(why, 0) + 1

    async def pace(self) -> None:
        """Wait before answering a refusal, once the bot has had its free ones."""
        self.refusals += 1
        if self.refusals > self.limits.free_refusals:
            async with self.pacing:
                await asyncio.sleep(self.limits.refusal_pace)

    def admit(self, method: str, size: int) -> None:
        """Take in a unary call of ``size`` bytes, or raise :class:`Refusal`; :meth:`release` ends it."""
        limits = self.limits
        short = method.rsplit("/", 1)[-1]
        if self.in_flight >= limits.calls:
            self.refused("calls")
            raise Refusal(
                f"{short} refused: this bot has {limits.calls} calls in flight through its gateways, as "
                "many as it may; wait for their answers",
                "LIMIT_REACHED",
                "gateway_calls",
                0.1,
            )
        if self.bytes + size > limits.bytes_in_flight:
            self.refused("bytes")
            raise Refusal(
                f"{short} refused: this bot's calls in flight hold {self.bytes + size} bytes in its "
                f"gateways, more than the {limits.bytes_in_flight} it may",
                "LIMIT_REACHED",
                "gateway_bytes",
                0.1,
            )
        wait = self.calls.take()
        if wait > 0:
            self.refused("rate")
            raise Refusal(
                f"{short} refused: this bot made more calls than its {limits.rate:g} per second allow "
                f"(an accepted decision and a turn of its Play stream are not counted); try again in "
                f"{wait:.2f} s",
                "RATE_LIMITED",
                "gateway_rate",
                wait,
            )
        self.in_flight += 1
        self.hold(size)
        self.usage.calls += 1
        self.usage.most_calls = max(self.usage.most_calls, self.in_flight)

    def release(self, size: int) -> None:
        self.in_flight -= 1
        self.drop(size)

    def hold(self, size: int) -> None:
        """Bytes now held for the bot."""
        self.bytes += size
        self.usage.most_bytes = max(self.usage.most_bytes, self.bytes)

    def drop(self, size: int) -> None:
        self.bytes -= size

    async def message(self) -> None:
        """One message of a Play stream: wait for its token (a stream is slowed, never refused)."""
        while (wait := self.calls.take()) > 0:
            self.usage.waited_seconds += wait
            await asyncio.sleep(wait)
        self.usage.play_messages += 1

    def turn(self) -> None:
        """The server sent the bot a turn: the decision it owes costs nothing."""
        self.calls.give_back()

    async def cpu_wait(self) -> None:
        """Wait while the bot has spent more of the runner's CPU than its share."""
        debt = self.cpu.debt()
        if debt > 0:
            self.usage.waited_seconds += debt
            await asyncio.sleep(debt)

    def spent(self, seconds: float) -> None:
        self.usage.cpu_seconds += seconds
        self.cpu.charge(seconds)


async def metered(budget: BotBudget, work: Awaitable[T]) -> T:
    """Run ``work``, charging the CPU time of each of its steps to ``budget`` (the steps run in this
    thread, so the thread's CPU clock between one resumption and the next suspension is the bot's)."""
    result: T = await _Metered(budget, work)
    return result


class _Metered:
    def __init__(self, budget: BotBudget, work: Awaitable[Any]) -> None:
        self.budget = budget
        self.work = work

    def __await__(self) -> Generator[Any, Any, Any]:
        return _steps(self.budget, self.work.__await__())


def _steps(budget: BotBudget, inner: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    value: Any = None
    error: BaseException | None = None
    while True:
        started = time.thread_time()
        try:
            yielded = inner.throw(error) if error is not None else inner.send(value)
        except StopIteration as stop:
            budget.spent(time.thread_time() - started)
            return stop.value
        except BaseException:
            budget.spent(time.thread_time() - started)
            raise
        budget.spent(time.thread_time() - started)
        try:
            value, error = (yield yielded), None
        except BaseException as thrown:  # a cancellation, passed on to the work
            value, error = None, thrown
