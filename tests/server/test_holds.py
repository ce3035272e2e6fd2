"""Holds (kutnahora.plumbing.holds), the per-caller count of open streams behind the web front end's and
the arena's stream limits: against a plain model over any sequence of takes and gives, no key holds more
than its bound, a refused take counts nothing, giving back what was never taken changes nothing, and a key
that holds nothing is forgotten (a crowd that came and went leaves no entries)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kutnahora.plumbing.holds import Holds

STEPS = st.lists(st.tuples(st.booleans(), st.sampled_from("abcd")), max_size=200)


@given(most=st.integers(min_value=0, max_value=4), steps=STEPS)
def test_holds_match_a_plain_count_within_the_bound(most: int, steps: list[tuple[bool, str]]) -> None:
    holds: Holds[str] = Holds(most)
    model: dict[str, int] = {}
    for take, key in steps:
        if take:
            allowed = most == 0 or model.get(key, 0) < most
            assert holds.take(key) is allowed
            if allowed:
                model[key] = model.get(key, 0) + 1
        else:
            holds.give(key)
            if model.get(key, 0) > 0:
                model[key] -= 1
        model = {k: v for k, v in model.items() if v > 0}
        assert all(holds.held(k) == model.get(k, 0) for k in "abcd")
        assert holds.total == sum(model.values()) and len(holds) == len(model)
        if most:
            assert all(holds.held(k) <= most for k in "abcd")


def test_a_key_at_its_bound_is_refused_until_it_gives_one_back() -> None:
    holds: Holds[str] = Holds(2)
    assert holds.take("x") and holds.take("x") and not holds.take("x")
    assert holds.take("y")  # another key's place is its own
    holds.give("x")
    assert holds.take("x") and holds.held("x") == 2
    for _ in range(3):
        holds.give("x")
    holds.give("y")
    assert len(holds) == 0 and holds.total == 0 and holds.held("x") == 0
