"""Pools: which games the arena matches in, named by player count and, optionally, a clock.

A pool's name is its player count (``2``, ``3``, ``4``), which plays with the game server's default clock,
or the count and a clock name (``4-fast``, ``2-slow``). ``--pools`` lists them; the default is ``2,3,4``.
"""

from __future__ import annotations

from dataclasses import dataclass

CLOCKS: dict[str, tuple[int, int]] = {
    "fast": (2_000, 60_000),
    "slow": (30_000, 900_000),
}
"""Named clocks: milliseconds per decision and of the time bank."""

DEFAULT_POOLS = "2,3,4"


@dataclass(frozen=True, slots=True)
class Pool:
    """One pool: its name, its games' player count and clock (None: the game server's default)."""

    name: str
    players: int
    decision_ms: int | None = None
    bank_ms: int | None = None


def parse_pool(name: str) -> Pool:
    """The pool a name describes; ValueError with a sentence when it describes none."""
    count, _, clock = name.strip().partition("-")
    if count not in ("2", "3", "4"):
        raise ValueError(f"pool {name!r} does not start with a player count of 2, 3 or 4")
    if not clock:
        return Pool(name.strip(), int(count))
    if clock not in CLOCKS:
        known = ", ".join(sorted(CLOCKS))
        raise ValueError(f"pool {name!r} names the clock {clock!r}; the clocks are {known}")
    decision, bank = CLOCKS[clock]
    return Pool(name.strip(), int(count), decision, bank)


def parse_pools(text: str) -> dict[str, Pool]:
    """The pools of a comma-separated list, by name; ValueError for a bad or repeated one."""
    pools: dict[str, Pool] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        pool = parse_pool(part)
        if pool.name in pools:
            raise ValueError(f"pool {pool.name!r} is listed twice")
        pools[pool.name] = pool
    if not pools:
        raise ValueError("no pool is listed")
    return pools
