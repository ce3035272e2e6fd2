"""Where the per-caller limits keep their counts: this replica's memory, or a Redis every replica shares.

Two kinds of count serve every per-caller limit of the game server (:mod:`kutnahora.server.quotas`) and
of the arena (:mod:`kutnahora.arena.quotas`):

- :class:`Buckets`, a token bucket per caller (a rate: calls, reads, registrations);
- :class:`Places`, what each caller holds now, up to a bound (unfinished games, open streams).

With ``memory`` (the default) each replica counts for itself: a caller spread over N replicas gets N
times its allowance. With a ``redis://`` URL (``rediss://`` for TLS, ``unix://`` for a socket) every
replica counts in the same Redis, so a caller's allowance is the same whether it reaches one replica or
several:

- a bucket is one Redis hash per caller, taken from by a script that runs in Redis with Redis's own clock
  (``TIME``), so that the replicas' clocks do not matter; it expires once it would be full again. A call
  let through on a replica's own count may be settled in the shared bucket after (:meth:`Buckets.charge`),
  which may leave the bucket owing tokens;
- a caller's places are one sorted set, a member per thing held, scored by the end of its lease
  (:data:`LEASE_SECONDS`); each replica renews the leases of what it holds every third of a lease, so the
  places of a replica that dies are free again within a lease. Each replica also remembers what it holds
  itself (:meth:`Places.held`), for its own tables and metrics.

**When the shared store cannot be reached** (an error, or no answer within ``timeout``), the limits fail
open to this replica's memory: each replica counts for itself again, as with ``memory``, until the store
answers. An operator expects the limits to go on protecting each replica and the games to go on: a Redis
outage must not refuse every game and read of every caller (fail closed would make Redis a single point of
failure of the whole service), nor lift every limit (an attacker who can make Redis slow would then be
unlimited). Each failure is counted (``on_error``), the first one and then one a minute are logged at
warning, and the store is not asked again for :data:`RETRY_SECONDS`, so that an unreachable Redis costs a
call at most one ``timeout`` every few seconds, not one per call. A place taken in memory while the store
was away is given back in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Coroutine
from typing import Any

import redis.asyncio
import redis.exceptions

from kutnahora.plumbing.callers import Caller, RateLimiter
from kutnahora.plumbing.errors import ServiceError, exhausted
from kutnahora.plumbing.holds import Holds

MEMORY = "memory"
"""The store that keeps each replica's counts in its own memory."""

SCHEMES = ("redis://", "rediss://", "unix://")
"""How a shared store's URL starts."""

LEASE_SECONDS = 60.0
"""How long a place held in the shared store stays held without its replica renewing it."""

RETRY_SECONDS = 5.0
"""How long the limits count in memory, without asking, after the shared store failed."""

LOG_INTERVAL = 60.0
"""Seconds between two log lines about an unreachable shared store."""

ERRORS = (redis.exceptions.RedisError, OSError, asyncio.TimeoutError)
"""What a call to an unreachable, slow or failing Redis raises."""

TAKE_TOKENS_LUA = """
local function take_tokens(key, rate, burst, cost)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  local state = redis.call('HMGET', key, 'tokens', 'stamp')
  local tokens = tonumber(state[1])
  local stamp = tonumber(state[2])
  if tokens == nil or stamp == nil then
    tokens = burst
    stamp = now
  end
  tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate)
  local wait = 0
  if tokens < cost then
    wait = (math.min(cost, burst) - tokens) / rate
  else
    tokens = tokens - cost
  end
  redis.call('HSET', key, 'tokens', string.format('%.6f', tokens), 'stamp', string.format('%.6f', now))
  redis.call('PEXPIRE', key, math.ceil((burst - tokens) / rate * 1000) + 1000)
  return wait
end
"""
"""A Lua function for scripts of :class:`Buckets`' keys: ``take_tokens(key, rate, burst, cost)`` takes
``cost`` tokens from the bucket at ``key`` (``rate`` above 0) and returns 0, or takes nothing and returns
the seconds after which it will hold them; on Redis's clock."""

_TAKE_TOKENS = (
    TAKE_TOKENS_LUA
    + """
local wait = take_tokens(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
return string.format('%.6f', wait)
"""
)

_CHARGE_TOKENS = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens = tonumber(state[1])
local stamp = tonumber(state[2])
if tokens == nil or stamp == nil then
  tokens = burst
  stamp = now
end
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate) - cost
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'stamp', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return string.format('%.6f', math.max(0, (1 - tokens) / rate))
"""

_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

_TAKE_PLACE = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local most = tonumber(ARGV[2])
if most > 0 and redis.call('ZCARD', KEYS[1]) >= most then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
"""
)

_RENEW_PLACES = (
    _NOW_MS
    + """
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
end
return 1
"""
)

_COUNT_PLACES = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
"""
)


def parse_url(text: str) -> str:
    """``--quota-store``: ``memory``, or a Redis URL; ValueError, with a sentence, for anything else."""
    text = text.strip()
    if text == MEMORY or text.startswith(SCHEMES):
        return text
    raise ValueError(f"{text!r} is neither memory nor a redis://, rediss:// or unix:// URL")


def show_url(url: str) -> str:
    """``--quota-store`` as logs and ``--help`` write it: the URL without its password."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{scheme}://{userinfo.partition(':')[0]}:***@{host}"


class QuotaStore:
    """Where one service's per-caller counts live: ``memory``, or the Redis at ``url``, its keys starting
    with ``prefix`` (so that several deployments, or the game server and the arena, may share one)."""

    def __init__(
        self,
        url: str = MEMORY,
        prefix: str = "kutnahora",
        *,
        log: Any = None,
        on_error: Callable[[], None] | None = None,
        timeout: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = parse_url(url)
        self.prefix = prefix
        self.redis: redis.asyncio.Redis | None = None
        if self.url != MEMORY:
            self.redis = redis.asyncio.from_url(
                self.url, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        self._log = log
        self._on_error = on_error
        self._clock = clock
        self._down_until = float("-inf")
        self._logged_at = float("-inf")
        self._places: list[Places] = []
        self._renewer: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def shared(self) -> bool:
        """Whether the counts live in a store every replica shares."""
        return self.redis is not None

    def key(self, *parts: str) -> str:
        """A Redis key of this store: its prefix and ``parts``, joined by ``:``."""
        return ":".join((self.prefix, *parts))

    def usable(self) -> bool:
        """Whether to ask the shared store now: there is one, and it has not failed just now."""
        return self.redis is not None and self._clock() >= self._down_until

    def failed(self, error: BaseException, doing: str) -> None:
        """The shared store failed while ``doing``: count in memory for :data:`RETRY_SECONDS`, count the
        failure, and log it unless one was logged less than :data:`LOG_INTERVAL` ago. When the task was
        being cancelled, the error is the cancellation's, not the store's: CancelledError is raised."""
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise asyncio.CancelledError from error
        now = self._clock()
        self._down_until = now + RETRY_SECONDS
        if self._on_error is not None:
            self._on_error()
        if self._log is not None and now - self._logged_at >= LOG_INTERVAL:
            self._logged_at = now
            self._log.warning(
                "quota store unreachable: counting in this replica's memory",
                store=show_url(self.url),
                doing=doing,
                error=f"{type(error).__name__}: {error}",
                retry_seconds=RETRY_SECONDS,
            )

    async def check(self) -> bool:
        """Ask the shared store once, as the service starts: whether it answered (logged at info); one that
        does not is counted and logged as any failure, and the service starts all the same, counting in
        memory until it answers."""
        if self.redis is None:
            return True
        try:
            await self.redis.ping()
        except ERRORS as error:
            self.failed(error, "starting")
            return False
        if self._log is not None:
            self._log.info("quota store reachable", store=show_url(self.url))
        return True

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background, kept until it ends (:meth:`close` waits for it)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def renewing(self, places: Places) -> None:
        """Renew ``places``' leases from now on, every third of a lease."""
        if places not in self._places:
            self._places.append(places)
        if self._renewer is None and not self._stop.is_set():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        # Stopped by an event, never cancelled: a cancellation that lands inside a Redis call can surface
        # as the client's connection error, which would read as a failure of the store.
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), LEASE_SECONDS / 3)
            if self._stop.is_set():
                return
            for places in self._places:
                await places.renew()

    async def stop_renewing(self) -> None:
        """Renew no lease from now on (the renewal under way, if any, ends first)."""
        self._stop.set()
        if self._renewer is not None:
            await asyncio.gather(self._renewer, return_exceptions=True)
            self._renewer = None

    async def close(self) -> None:
        """Stop renewing, let the removals under way finish, and close the connection."""
        await self.stop_renewing()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.redis is not None:
            await self.redis.aclose()


class Buckets:
    """A token bucket per caller key, ``name`` among a store's: ``rate`` a second on average, ``burst``
    at once; kept in the shared store when there is one, else (or while it fails) in :attr:`local`."""

    def __init__(
        self,
        store: QuotaStore,
        name: str,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self.store = store
        self.name = name
        self.rate = rate
        self.burst = max(1, burst)
        self.local = RateLimiter(rate, burst, clock, max_keys=max_keys)
        redis_client = store.redis
        self._script = redis_client.register_script(_TAKE_TOKENS) if redis_client is not None else None
        self._charge = redis_client.register_script(_CHARGE_TOKENS) if redis_client is not None else None

    def __len__(self) -> int:
        """The callers whose bucket this replica's memory holds."""
        return len(self.local)

    async def take(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from the key's bucket and return 0.0; or, when it does not hold that many,
        take nothing and return the seconds after which it will."""
        if self.rate <= 0:
            return 0.0
        if self._script is not None and self.store.usable():
            try:
                answer = await self._script(
                    keys=[self.store.key(self.name, key)], args=[self.rate, self.burst, cost]
                )
                return float(answer)
            except ERRORS as error:
                self.store.failed(error, f"taking from {self.name}")
        return self.local.take(key, cost)

    async def charge(self, key: str, cost: float = 1.0) -> float | None:
        """Take ``cost`` tokens from the key's bucket in the shared store even when it holds fewer (it then
        owes them, and refuses until it has made them up), for a call this replica let through on its own
        count and settles after: the seconds until the bucket holds one token again (0.0 when it does).
        None, and nothing taken, without a shared store or while it fails: the call was counted in memory."""
        if self.rate <= 0 or self._charge is None or not self.store.usable():
            return None
        try:
            answer = await self._charge(
                keys=[self.store.key(self.name, key)], args=[self.rate, self.burst, cost]
            )
        except ERRORS as error:
            self.store.failed(error, f"charging {self.name}")
            return None
        return float(answer)


class Places:
    """What each caller key holds now, at most ``most`` each (0: any number), ``name`` among a store's:
    in the shared store when there is one, else (or while it fails) in this replica's memory."""

    def __init__(self, store: QuotaStore, name: str, most: int) -> None:
        self.store = store
        self.name = name
        self.most = most
        self._mine: Holds[str] = Holds(0)  # what this replica holds, by key, wherever it is counted
        self._memory: Holds[str] = Holds(most)  # what is counted in memory only
        self._members: dict[str, tuple[str, bool]] = {}  # member -> (key, counted in the shared store)
        redis_client = store.redis
        self._take = redis_client.register_script(_TAKE_PLACE) if redis_client is not None else None
        self._renew = redis_client.register_script(_RENEW_PLACES) if redis_client is not None else None
        self._count = redis_client.register_script(_COUNT_PLACES) if redis_client is not None else None

    def held(self, key: str) -> int:
        """What ``key`` holds through this replica."""
        return self._mine.held(key)

    def __len__(self) -> int:
        """The keys that hold one or more through this replica."""
        return len(self._mine)

    async def take(self, key: str) -> str | None:
        """Take a place for ``key``: the member naming it (to :meth:`give` it back), or None when the key
        holds ``most`` already."""
        member = uuid.uuid4().hex
        shared = False
        if self.most > 0 and self._take is not None and self.store.usable():
            try:
                lease_ms = int(LEASE_SECONDS * 1000)
                taken = await self._take(
                    keys=[self.store.key(self.name, key)], args=[lease_ms, self.most, member]
                )
            except ERRORS as error:
                self.store.failed(error, f"taking a place in {self.name}")
            else:
                if not int(taken):
                    return None
                shared = True
        if not shared and not self._memory.take(key):
            return None
        self._mine.take(key)
        self._members[member] = (key, shared)
        if shared:
            self.store.renewing(self)
        return member

    def give(self, member: str) -> None:
        """Give back the place :meth:`take` named ``member`` (nothing for a member given back already);
        a place in the shared store is removed in the background (its lease ends it if that fails)."""
        found = self._members.pop(member, None)
        if found is None:
            return
        key, shared = found
        self._mine.give(key)
        if shared:
            self.store.spawn(self._remove(key, member))
        else:
            self._memory.give(key)

    async def _remove(self, key: str, member: str) -> None:
        if self.store.redis is None:
            return
        try:
            await self.store.redis.zrem(self.store.key(self.name, key), member)
        except ERRORS as error:
            self.store.failed(error, f"giving back a place in {self.name}")

    async def renew(self) -> None:
        """Renew the leases of every place this replica holds in the shared store."""
        if self._renew is None or not self.store.usable():
            return
        by_key: dict[str, list[str]] = defaultdict(list)
        for member, (key, shared) in self._members.items():
            if shared:
                by_key[key].append(member)
        lease_ms = int(LEASE_SECONDS * 1000)
        try:
            for key, members in by_key.items():
                await self._renew(keys=[self.store.key(self.name, key)], args=[lease_ms, *members])
        except ERRORS as error:
            self.store.failed(error, f"renewing the places in {self.name}")

    async def count(self, key: str) -> int:
        """What ``key`` holds through every replica: the shared store's count when there is one (and it
        answers), else this replica's."""
        if self._count is not None and self.store.usable():
            try:
                return int(await self._count(keys=[self.store.key(self.name, key)], args=[]))
            except ERRORS as error:
                self.store.failed(error, f"counting the places in {self.name}")
        return self._memory.held(key)


async def rate_refusal(
    buckets: Buckets, caller: Caller, quota: str, sentence: Callable[[str, float], str]
) -> ServiceError | None:
    """Count one call of ``caller`` against ``buckets`` (an exempt caller is not counted): None when its
    bucket held one; else, taking nothing, the refusal to raise: RESOURCE_EXHAUSTED, reason ``caller_rate``
    (``RATE_LIMITED``), ``sentence(caller key, seconds to wait)`` as its message, a RetryInfo of those
    seconds, and ``quota`` and the caller's key in its ErrorInfo."""
    if caller.exempt:
        return None
    wait = await buckets.take(caller.key)
    if wait <= 0:
        return None
    return exhausted(
        sentence(caller.key, wait),
        "caller_rate",
        retry_after=wait,
        metadata={"quota": quota, "caller": caller.key},
    )
