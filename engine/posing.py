"""One table from decision kind to the function that poses its legal options.

Every decision the rules pose has one function ``(state, seat) -> options`` that works its options out,
in the rule module that poses it; the rule calls it when it poses the decision, and :func:`pending_options`
(which the resampler uses for a decision another seat owes) calls the same function through
:data:`POSERS`, on a state like the one the decision was posed in. A rule that first checks whether there
is anything to choose (a free decline alone is no decision) does so on the options the function gives.

Context the function reads from the state: ``free_action`` (set before the first decision of an action
is posed), ``drawn`` and ``kept_tile`` (the mine tiles), the agenda (the HOUSE step a guild building
being built still has to come, for REMOVE_HOUSE).
"""

from __future__ import annotations

from collections.abc import Callable

from kutnahora.engine.barbara import barbara_house_options, barbara_patrician_options, score_building_options
from kutnahora.engine.flow import guild_rows_options, guild_set_options, joker_options, play_card_options
from kutnahora.engine.income import seat_patrician_options
from kutnahora.engine.mine import (
    mine_square_options,
    mine_tile_options,
    refill_options,
    tech_square_options,
)
from kutnahora.engine.options import DecisionKind, Option
from kutnahora.engine.rounds import tax_options
from kutnahora.engine.state import GameState
from kutnahora.engine.town import (
    build_square_options,
    build_tile_options,
    plot_square_options,
    posed_remove_house_options,
    public_reward_choices,
    rights_tile_options,
)

Poser = Callable[[GameState, int], tuple[Option, ...]]

POSERS: dict[DecisionKind, Poser] = {
    DecisionKind.GUILD_SET: guild_set_options,
    DecisionKind.GUILD_ROWS: guild_rows_options,
    DecisionKind.PLAY_CARD: play_card_options,
    DecisionKind.JOKER_ACTION: joker_options,
    DecisionKind.REFILL_MINERS: refill_options,
    DecisionKind.MINE_TILE: mine_tile_options,
    DecisionKind.MINE_SQUARE: mine_square_options,
    DecisionKind.TECH_SQUARE: tech_square_options,
    DecisionKind.RIGHTS_TILE: rights_tile_options,
    DecisionKind.PLOT_SQUARE: plot_square_options,
    DecisionKind.BUILD_TILE: build_tile_options,
    DecisionKind.BUILD_SQUARE: build_square_options,
    DecisionKind.REMOVE_HOUSE: posed_remove_house_options,
    DecisionKind.PUBLIC_REWARD: public_reward_choices,
    DecisionKind.SEAT_PATRICIAN: seat_patrician_options,
    DecisionKind.TAX: tax_options,
    DecisionKind.BARBARA_HOUSE: barbara_house_options,
    DecisionKind.BARBARA_PATRICIAN: barbara_patrician_options,
    DecisionKind.SCORE_BUILDING: score_building_options,
}
"""The function that poses each kind of decision (every kind has one)."""


def pending_options(state: GameState, seat: int, kind: DecisionKind) -> tuple[Option, ...]:
    """The legal options of a ``kind`` decision ``seat`` owes in ``state``, worked out by the function the
    rules pose it with (the state being the one it was posed in)."""
    return POSERS[kind](state, seat)
