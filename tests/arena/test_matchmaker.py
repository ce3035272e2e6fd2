"""The matchmaker's properties: every rule of :mod:`kutnahora.arena.matchmaker`, over random queues."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kutnahora.arena.matchmaker import Match, Ticket, Window, make_matches

POOLS = {"2": 2, "3": 3, "4": 4}


@st.composite
def queues(draw: st.DrawFn) -> list[Ticket]:
    """A queue of tickets over the three pools; some accounts seek in several pools, some are house bots."""
    accounts = draw(st.integers(min_value=1, max_value=14))
    tickets = []
    for number in range(draw(st.integers(min_value=0, max_value=30))):
        pool = draw(st.sampled_from(sorted(POOLS)))
        account = f"a{draw(st.integers(min_value=0, max_value=accounts - 1))}"
        tickets.append(
            Ticket(
                ticket_id=f"t{number}",
                account=account,
                pool=pool,
                players=POOLS[pool],
                rating=draw(st.floats(min_value=-20, max_value=60, allow_nan=False)),
                waited=draw(st.floats(min_value=0, max_value=20, allow_nan=False)),
                house=account in ("a0", "a1"),
            )
        )
    return tickets


@st.composite
def seat_histories(draw: st.DrawFn) -> dict[tuple[str, str], list[int]]:
    counts: dict[tuple[str, str], list[int]] = {}
    for account in range(14):
        for pool, players in POOLS.items():
            if draw(st.booleans()):
                counts[(f"a{account}", pool)] = draw(
                    st.lists(st.integers(0, 9), min_size=players, max_size=players)
                )
    return counts


def _key(matches: list[Match]) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((m.pool, tuple(t.ticket_id for t in m.tickets)) for m in matches)


@settings(max_examples=300, deadline=None)
@given(queues(), seat_histories())
def test_matches_keep_every_rule(tickets: list[Ticket], counts: dict[tuple[str, str], list[int]]) -> None:
    window = Window()
    matches = make_matches(tickets, counts, window)
    used: set[str] = set()
    for match in matches:
        players = POOLS[match.pool]
        assert len(match.tickets) == players
        assert all(t.pool == match.pool for t in match.tickets)
        accounts = [t.account for t in match.tickets]
        assert len(set(accounts)) == players, "an account holds two seats of one game"
        assert not all(t.house for t in match.tickets), "house bots matched only with each other"
        ratings = [t.rating for t in match.tickets]
        overdue = any(not t.house and t.waited >= window.max_wait for t in match.tickets)
        assert overdue or max(ratings) - min(ratings) <= min(window.width(t.waited) for t in match.tickets)
        ids = {t.ticket_id for t in match.tickets}
        assert not ids & used, "a ticket in two matches"
        used |= ids
        assert set(ids) <= {t.ticket_id for t in tickets}


@settings(max_examples=200, deadline=None)
@given(queues(), seat_histories(), st.randoms(use_true_random=False))
def test_the_order_of_the_queue_does_not_matter(
    tickets: list[Ticket], counts: dict[tuple[str, str], list[int]], rng: random.Random
) -> None:
    shuffled = list(tickets)
    rng.shuffle(shuffled)
    assert _key(make_matches(tickets, counts)) == _key(make_matches(shuffled, counts))


@settings(max_examples=200, deadline=None)
@given(queues())
def test_with_open_windows_nobody_waits_who_could_play(tickets: list[Ticket]) -> None:
    """Once every window is open, what is left in a pool cannot make a game: too few distinct accounts,
    or only house bots."""
    open_window = Window(max_wait=0.0)
    matches = make_matches(tickets, None, open_window)
    matched = {t.ticket_id for m in matches for t in m.tickets}
    for pool, players in POOLS.items():
        left = {t.account: t for t in tickets if t.pool == pool and t.ticket_id not in matched}
        # An account already matched in this pool has no second ticket there to play.
        accounts_matched = {t.account for m in matches if m.pool == pool for t in m.tickets}
        waiting = [t for a, t in left.items() if a not in accounts_matched]
        assert len(waiting) < players or all(t.house for t in waiting)


@settings(max_examples=200, deadline=None)
@given(queues(), seat_histories())
def test_seats_go_where_the_accounts_have_played_least(
    tickets: list[Ticket], counts: dict[tuple[str, str], list[int]]
) -> None:
    for match in make_matches(tickets, counts):

        def cost(order: tuple[Ticket, ...]) -> int:
            total = 0
            for seat, ticket in enumerate(order):
                history = counts.get((ticket.account, ticket.pool), [])
                total += history[seat] if seat < len(history) else 0
            return total

        assert cost(match.tickets) == min(cost(p) for p in itertools.permutations(match.tickets))


def _ticket(number: int, rating: float, waited: float = 0.0, pool: str = "2") -> Ticket:
    return Ticket(f"t{number}", f"a{number}", pool, POOLS[pool], rating, waited)


def test_closest_ratings_are_matched_first() -> None:
    tickets = [_ticket(0, 0.0), _ticket(1, 30.0), _ticket(2, 1.0), _ticket(3, 29.0)]
    groups = {frozenset(t.ticket_id for t in m.tickets) for m in make_matches(tickets)}
    assert groups == {frozenset({"t0", "t2"}), frozenset({"t1", "t3"})}


def test_the_window_widens_with_waiting() -> None:
    far = [_ticket(0, 0.0), _ticket(1, 20.0)]
    assert make_matches(far) == []
    waited = [_ticket(0, 0.0, waited=9.0), _ticket(1, 20.0, waited=9.0)]
    assert len(make_matches(waited)) == 1
    one_waited = [_ticket(0, 0.0, waited=5.0), _ticket(1, 20.0, waited=0.0)]
    assert make_matches(one_waited) == [], "the fresh ticket's window is still narrow"
    overdue = [_ticket(0, 0.0, waited=8.0), _ticket(1, 20.0, waited=0.0)]
    assert len(make_matches(overdue)) == 1, "a ticket that waited the bound is matched, windows or not"


def test_a_low_rated_bot_is_not_starved_by_two_that_rematch() -> None:
    """Two strong bots that seek again at once would meet each other forever under the windows alone;
    once the weak bot has waited the bound it is served first, with the nearest of them."""
    fresh = [_ticket(1, 30.0, waited=0.1), _ticket(2, 31.0, waited=0.0)]
    assert {
        t.ticket_id for m in make_matches([_ticket(0, -10.0, waited=7.9), *fresh]) for t in m.tickets
    } == {
        "t1",
        "t2",
    }
    matches = make_matches([_ticket(0, -10.0, waited=8.0), *fresh])
    assert [sorted(t.ticket_id for t in m.tickets) for m in matches] == [["t0", "t1"]]


def _ratings_with_outliers() -> st.SearchStrategy[float]:
    return st.one_of(
        st.floats(min_value=-20, max_value=60, allow_nan=False),
        st.floats(min_value=-1e9, max_value=1e9, allow_nan=False),
        st.sampled_from([-1e12, -500.0, 500.0, 1e12]),
    )


@st.composite
def crowded_queues(draw: st.DrawFn) -> tuple[list[Ticket], Window]:
    """Tickets with arbitrary ratings (outliers among them) and waits around the bound, in several
    pools, some accounts seeking twice in a pool, some house bots; and a window."""
    window = Window(
        base=draw(st.floats(min_value=0, max_value=10)),
        per_second=draw(st.floats(min_value=0, max_value=5)),
        max_wait=draw(st.floats(min_value=0.5, max_value=60)),
    )
    accounts = draw(st.integers(min_value=1, max_value=40))
    tickets = []
    for number in range(draw(st.integers(min_value=0, max_value=60))):
        pool = draw(st.sampled_from(sorted(POOLS)))
        account = f"a{draw(st.integers(min_value=0, max_value=accounts - 1))}"
        waited = draw(
            st.one_of(
                st.floats(min_value=0, max_value=2 * window.max_wait),
                st.just(window.max_wait),
                st.floats(min_value=0, max_value=1e6),
            )
        )
        tickets.append(
            Ticket(
                f"t{number}",
                account,
                pool,
                POOLS[pool],
                draw(_ratings_with_outliers()),
                waited,
                house=account in ("a0", "a1", "a2"),
            )
        )
    return tickets, window


@settings(max_examples=500, deadline=None)
@given(crowded_queues(), seat_histories())
def test_a_ticket_older_than_the_bound_is_matched_whenever_the_pool_holds_enough(
    queue: tuple[list[Ticket], Window], counts: dict[tuple[str, str], list[int]]
) -> None:
    """The bound on waiting, whatever the ratings: in each pool, the k-th oldest ticket (not a house
    bot's) that has waited ``max_wait`` is in a match whenever the pool holds tickets of at least
    ``k * players`` accounts; so the oldest is whenever a game can be made at all."""
    tickets, window = queue
    matches = make_matches(tickets, counts, window)
    matched = {t.ticket_id for m in matches for t in m.tickets}
    assert len(matched) == sum(len(m.tickets) for m in matches)
    for pool, players in POOLS.items():
        held: dict[str, Ticket] = {}  # an account's ticket in the pool: its longest waiting one
        for ticket in tickets:
            if ticket.pool == pool:
                other = held.get(ticket.account)
                if other is None or (ticket.waited, ticket.ticket_id) > (other.waited, other.ticket_id):
                    held[ticket.account] = ticket
        overdue = sorted(
            (t for t in held.values() if not t.house and t.waited >= window.max_wait),
            key=lambda t: (-t.waited, t.ticket_id),
        )
        for rank, ticket in enumerate(overdue, start=1):
            if len(held) >= rank * players:
                assert ticket.ticket_id in matched, (
                    f"ticket {ticket.ticket_id} waited {ticket.waited} s (bound {window.max_wait} s), "
                    f"oldest but {rank - 1}, and the pool holds {len(held)} accounts, yet it was not matched"
                )


def test_one_account_never_sits_twice_in_a_game() -> None:
    tickets = [Ticket(f"t{n}", "same", "4", 4, 10.0, 30.0) for n in range(4)]
    assert make_matches(tickets) == []


def test_house_bots_play_only_with_others() -> None:
    house = [Ticket(f"h{n}", f"house{n}", "2", 2, 10.0, 30.0, house=True) for n in range(4)]
    assert make_matches(house) == []
    matches = make_matches([*house, _ticket(9, 10.0, waited=30.0)])
    assert len(matches) == 1 and any(t.account == "a9" for t in matches[0].tickets)
