"""The young collector: the youngest generation collected on a timer, what survives frozen, cycles among
frozen objects reclaimed by the occasional full collection (:mod:`kutnahora.server.collector`)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from kutnahora.server import collector
from kutnahora.server.main import build_parser, config_from_args


class Knot:
    """An object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: Knot | None = None


def knot() -> tuple[Knot, weakref.ref[Knot]]:
    """Two objects referring to each other: garbage only the cycle collector can free."""
    a, b = Knot(), Knot()
    a.other, b.other = b, a
    return a, weakref.ref(b)


@pytest.fixture
def thresholds_off() -> Iterator[None]:
    """No automatic collection during the test (so that only the young collector collects), and
    nothing left frozen after it."""
    before = gc.get_threshold()
    gc.set_threshold(10**9, 10**9, 10**9)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


async def test_young_garbage_is_collected_and_survivors_are_frozen(thresholds_off: None) -> None:
    young = collector.YoungCollector(0.01, 0)
    young.start()
    try:
        kept, kept_ref = knot()
        dropped, dropped_ref = knot()
        del dropped
        assert dropped_ref() is not None  # a cycle: reference counting alone does not free it
        await asyncio.sleep(0.1)
        assert young.young >= 2
        assert dropped_ref() is None, "a young cycle is collected by the next tick"
        assert kept_ref() is kept.other
        # What survived a tick is frozen: no collection walks it any more.
        tracked = {id(o) for o in gc.get_objects()}
        assert id(kept) not in tracked and id(kept.other) not in tracked
        assert gc.get_freeze_count() > 0
    finally:
        young.stop()
    assert young.full == 0


async def test_a_cycle_among_frozen_objects_waits_for_the_full_collection(thresholds_off: None) -> None:
    young = collector.YoungCollector(0.01, 0)
    young.start()
    try:
        kept, kept_ref = knot()
        await asyncio.sleep(0.05)  # frozen by now
        del kept
        await asyncio.sleep(0.05)
        assert kept_ref() is not None, "frozen garbage is not seen by young collections"
    finally:
        young.stop()
    full = collector.YoungCollector(0.01, 0.02)
    full.start()
    try:
        await asyncio.sleep(0.2)
        assert full.full >= 1
        assert kept_ref() is None, "the full collection reclaims it"
    finally:
        full.stop()


async def test_stop_ends_the_ticks(thresholds_off: None) -> None:
    young = collector.YoungCollector(0.01, 0)
    young.start()
    await asyncio.sleep(0.05)
    young.stop()
    ticks = young.young
    await asyncio.sleep(0.05)
    assert young.young == ticks


def test_periods_are_checked() -> None:
    with pytest.raises(ValueError, match="above 0"):
        collector.YoungCollector(0, 0)
    with pytest.raises(ValueError, match="not be negative"):
        collector.YoungCollector(0.1, -1)
    config = config_from_args(build_parser().parse_args([]))
    assert (config.gc_young_every_ms, config.gc_full_every_seconds) == (100.0, 3600.0)
    config = config_from_args(build_parser().parse_args(["--gc-young-every", "0"]))
    assert config.gc_young_every_ms == 0
    with pytest.raises(SystemExit, match="--gc-young-every and --gc-full-every must be 0"):
        config_from_args(build_parser().parse_args(["--gc-young-every", "-5"]))
