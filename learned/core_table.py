"""The observation vector's layout as the native rules core reads it: the offsets of
:class:`~kutnahora.learned.encoding.ObservationLayout`'s sections, in the order of the core's ``Encoding``
(``native/core/src/rules.hpp``), so that the core writes the very vector the engine's encoders write
(``tests/envs/test_engines.py`` compares them byte for byte)."""

from __future__ import annotations

from kutnahora.learned.encoding import COUNTERS, MAX_SEATS, SEAT_COUNTERS, STACK_LABELS, ObservationLayout


def encoding_table(layout: ObservationLayout) -> list[int]:
    """The observation layout's offsets as the core's ``Encoding`` reads them (``native/core/src/rules.hpp``).

    The vector is defined once, by :class:`~kutnahora.learned.encoding.ObservationLayout`; the core writes
    each section where this table says it starts."""
    at = {s.name: s.start for s in layout.sections}
    c = layout.components
    guilds = len(layout._guild_index)
    commodities = len(layout._commodity_index)
    seat_size = layout.section("seat +0").stop - at["seat +0"]
    production_at = len(SEAT_COUNTERS) + 4 * guilds
    hand_at = production_at + commodities + 3
    table = [
        layout.size,
        at["players"],
        at["phase"],
        at["counters"],
        at["start_seat"],
        at["market.decks"],
        at["market.arms"],
        at["market.prices"],
        at["market.no_market"],
        at["town_hall"],
        layout.hall_cols,
        1 + len(STACK_LABELS) + 1 + layout.buildings,
        at["town_discards"],
        at["building_in_hand"],
        at["city"],
        layout.city_cols,
        1 + MAX_SEATS + layout.buildings + MAX_SEATS + 1,
        at["mines"],
        layout.mine_cols,
        1 + layout.mine_tiles + MAX_SEATS,
        at["patricians.bank"],
        at["patricians.pool"],
        at["patricians.council"],
        at["events.revealed"],
        at["events.current"],
        at["setup.guild_card"],
        at["setup.mine_card"],
        at["setup.guild_sets_left"],
        at["pending.kind"],
        at["pending.seat"],
        at["private.drawn"],
        at["private.kept"],
        at["private.discarded"],
        at["seat +0"],
        seat_size,
        len(c.mine_tiles),
        layout.buildings,
        layout.mine_tiles,
        len(SEAT_COUNTERS),
        len(SEAT_COUNTERS) + guilds,
        production_at,
        hand_at,
        hand_at + layout.cards,
    ]
    assert len(COUNTERS) == 15 and len(STACK_LABELS) == 10, "the core writes 15 counters and 10 labels"
    events = [e.id for e in c.event_cards]
    return [*table, len(events), *events]


def encoding_arguments(layout: ObservationLayout) -> tuple[list[int], list[float], list[float]]:
    """What the core's ``Encoding`` is made of for ``layout``: its table, its scales and the normalised
    vector's lows (``kutnahora_core.Encoding(*encoding_arguments(layout))``)."""
    return encoding_table(layout), layout.scale.tolist(), layout.normalized_low.tolist()
