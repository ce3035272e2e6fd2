"""The matchmaker: one pure function from waiting tickets to matches.

:func:`make_matches` groups tickets by pool, sorts each pool by conservative rating and sweeps it: every run
of ``players`` neighbours in rating order is a candidate, candidates are taken closest spread first, and a
candidate is acceptable when its spread fits the window of each of its tickets, a window that widens with
the ticket's waiting time. The cost is a sort per pass (near-linear in the number of tickets), never a
comparison of every ticket with every other.

Rules it keeps:
- an account never holds two seats of one game;
- a match holds at least one ticket that is not a house bot's (house bots keep pools playable; they do not
  play each other endlessly);
- seats are handed out so that each account gets the seat it has played least in this pool.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Ticket:
    """One account waiting in one pool."""

    ticket_id: str
    account: str
    pool: str
    players: int
    rating: float
    """The account's conservative rating in the pool (μ − 3σ)."""
    waited: float
    """Seconds the ticket has waited."""
    house: bool = False


@dataclass(frozen=True, slots=True)
class Window:
    """How far apart ratings in one match may be: ``base`` at once, ``per_second`` more for every second
    waited, and any spread once a ticket has waited ``max_wait`` seconds, the bound on waiting: such a
    ticket is served first, with the tickets nearest to it in rating."""

    base: float = 5.0
    per_second: float = 2.0
    max_wait: float = 8.0

    def width(self, waited: float) -> float:
        """The spread a ticket that has waited ``waited`` seconds accepts."""
        if waited >= self.max_wait:
            return float("inf")
        return self.base + self.per_second * max(0.0, waited)


@dataclass(frozen=True, slots=True)
class Match:
    """A game to place: its pool and the tickets by seat (``tickets[seat]``)."""

    pool: str
    tickets: tuple[Ticket, ...]
    spread: float = field(default=0.0, compare=False)


def make_matches(
    tickets: Iterable[Ticket],
    seat_counts: Mapping[tuple[str, str], Sequence[int]] | None = None,
    window: Window | None = None,
) -> list[Match]:
    """The matches to make now from ``tickets``; a ticket is in at most one match.

    ``seat_counts[(account, pool)][seat]`` is how often the account has played that seat in that pool (for
    fair seat rotation); a missing entry counts as never. Pools are independent; within a pool, tickets
    of one account beyond the first (longest waiting) are ignored.
    """
    window = window or Window()
    counts = seat_counts or {}
    by_pool: dict[str, dict[str, Ticket]] = {}
    for ticket in tickets:
        pool = by_pool.setdefault(ticket.pool, {})
        held = pool.get(ticket.account)
        if held is None or (ticket.waited, ticket.ticket_id) > (held.waited, held.ticket_id):
            pool[ticket.account] = ticket
    matches: list[Match] = []
    for pool_name in sorted(by_pool):
        pool_tickets = list(by_pool[pool_name].values())
        for group in _match_pool(pool_tickets, window):
            matches.append(Match(pool_name, _seat(group, counts), _spread(group)))
    return matches


def _spread(group: Sequence[Ticket]) -> float:
    return max(t.rating for t in group) - min(t.rating for t in group)


def _match_pool(tickets: list[Ticket], window: Window) -> list[list[Ticket]]:
    """Groups of one pool: the overdue tickets' first (oldest first), then closest spread first, in passes
    until a pass makes none."""
    if not tickets:
        return []
    players = tickets[0].players
    remaining = sorted(tickets, key=lambda t: (t.rating, t.ticket_id))
    groups = _serve_overdue(remaining, players, window.max_wait)
    if groups:
        used = {t.ticket_id for group in groups for t in group}
        remaining = [t for t in remaining if t.ticket_id not in used]
    while len(remaining) >= players:
        widths = [window.width(t.waited) for t in remaining]
        candidates: list[tuple[float, int]] = []
        for start in range(len(remaining) - players + 1):
            group = remaining[start : start + players]
            spread = group[-1].rating - group[0].rating
            if spread > min(widths[start : start + players]):
                continue
            if all(t.house for t in group):
                continue
            candidates.append((spread, start))
        candidates.sort()
        taken = [False] * len(remaining)
        made = 0
        for _, start in candidates:
            if any(taken[start : start + players]):
                continue
            for index in range(start, start + players):
                taken[index] = True
            groups.append(remaining[start : start + players])
            made += 1
        if made == 0:
            break
        remaining = [t for t, used in zip(remaining, taken, strict=True) if not used]
    return groups


def _serve_overdue(ordered: list[Ticket], players: int, max_wait: float) -> list[list[Ticket]]:
    """Groups for the tickets (not house bots') that have waited ``max_wait``, oldest first: each with the
    ``players - 1`` free tickets nearest to it in rating (the lower one on a tie). ``ordered`` is sorted by
    rating; free tickets are kept in a linked list over it, so each group costs ``players`` steps."""
    overdue = sorted(
        (index for index, t in enumerate(ordered) if not t.house and t.waited >= max_wait),
        key=lambda index: (-ordered[index].waited, ordered[index].ticket_id),
    )
    if not overdue:
        return []
    count = len(ordered)
    below = list(range(-1, count - 1))  # the next free ticket below (-1: none)
    above = list(range(1, count + 1))  # the next free ticket above (count: none)
    free = [True] * count
    left = count
    groups: list[list[Ticket]] = []
    for index in overdue:
        if left < players:
            break
        if not free[index]:
            continue  # matched already, as a neighbour of an older ticket
        members = [index]
        low, high = below[index], above[index]
        rating = ordered[index].rating
        while len(members) < players:
            if high == count or (low != -1 and rating - ordered[low].rating <= ordered[high].rating - rating):
                members.append(low)
                low = below[low]
            else:
                members.append(high)
                high = above[high]
        for member in members:
            free[member] = False
            if below[member] != -1:
                above[below[member]] = above[member]
            if above[member] != count:
                below[above[member]] = below[member]
        left -= players
        groups.append(sorted((ordered[member] for member in members), key=lambda t: (t.rating, t.ticket_id)))
    return groups


def _seat(group: Sequence[Ticket], counts: Mapping[tuple[str, str], Sequence[int]]) -> tuple[Ticket, ...]:
    """The group in seat order: the order whose seats the accounts have played least (fewest in total,
    then the fewest at worst), else longest waiting first, then by ticket id (so the result does not
    depend on the input's order)."""
    ordered = sorted(group, key=lambda t: (-t.waited, t.ticket_id))
    histories = [counts.get((t.account, t.pool), ()) for t in ordered]
    if not any(histories):
        return tuple(ordered)
    players = len(ordered)
    played = [[h[seat] if seat < len(h) else 0 for seat in range(players)] for h in histories]
    best: tuple[int, ...] = tuple(range(players))
    best_cost: tuple[int, int] | None = None
    for order in itertools.permutations(range(players)):  # order[seat] = index into ordered
        costs = [played[index][seat] for seat, index in enumerate(order)]
        cost = (sum(costs), max(costs))
        if best_cost is None or cost < best_cost:
            best, best_cost = order, cost
    return tuple(ordered[index] for index in best)
