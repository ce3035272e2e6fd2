"""The engine's :class:`~kutnahora.engine.Observation` of a wire ``kutnahora.v1.Observation``.

A bot that simulates the game with the engine as a library (docs/architecture.md#layers) receives what every
bot receives, the wire observation, and nothing more; this module reads it back into the engine's own view,
which :func:`kutnahora.engine.resample` turns into whole states to search. For every position,
``engine_observation(wire(observe(state, seat))) == observe(state, seat)``.

Legal options are read back from their canonical text (``LegalOption.text``, :func:`~kutnahora.engine.
parse_option`), which the protocol guarantees to be the engine's own text form.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from kutnahora.engine import DecisionKind, Observation, WorkStep, parse_option
from kutnahora.engine.components import COMMODITIES, Arm, Color, Commodity, Deck, Guild, Square
from kutnahora.engine.state import Phase
from kutnahora.engine.view import CityTileView, MineView, PendingView, PlayerView, StackView
from kutnahora.v1 import common_pb2, game_pb2

E = TypeVar("E", bound=StrEnum)


def _by_number(engine_enum: type[E], wire_enum: object, prefix: str) -> dict[int, E]:
    """Wire enum numbers to engine members, matched by name (``GUILD_MINERS`` is ``Guild.MINERS``)."""
    return {wire_enum.Value(prefix + m.name): m for m in engine_enum}  # type: ignore[attr-defined]


GUILD = _by_number(Guild, common_pb2.Guild, "GUILD_")
COMMODITY = _by_number(Commodity, common_pb2.Commodity, "COMMODITY_")
DECK = _by_number(Deck, common_pb2.Deck, "DECK_")
ARM = _by_number(Arm, common_pb2.Arm, "ARM_")
COLOR = _by_number(Color, common_pb2.Color, "COLOR_")
PHASE = _by_number(Phase, game_pb2.Phase, "PHASE_")
DECISION_KIND = _by_number(DecisionKind, game_pb2.DecisionKind, "DECISION_KIND_")


def _square(square: common_pb2.Square) -> Square:
    return (square.row, square.col)


def _player(board: game_pb2.PlayerBoard) -> PlayerView:
    return PlayerView(
        seat=board.seat,
        groschen=board.groschen,
        reputation=board.reputation,
        points=board.points,
        guild_set=tuple(GUILD[g] for g in board.guild_set),
        guilds=tuple(GUILD[g] for g in board.guilds),
        production=tuple((COMMODITY[p.commodity], p.amount) for p in board.production),
        mine_ore=board.mine_ore,
        income=board.income,
        tax_due=board.tax_due,
        houses_removed=tuple(board.houses_removed),
        plots=tuple(_square(s) for s in board.plots),
        slots=tuple(board.slots),
        pelicans=board.pelicans,
        pelicans_used=board.pelicans_used,
        miners_pool=board.miners_pool,
        miners_reserve=board.miners_reserve,
        hand=tuple(board.hand),
        buildings=tuple(board.buildings),
    )


def _stack(stack: game_pb2.TownHallStack) -> StackView:
    label = GUILD[stack.guild].value if stack.guild else COLOR[stack.color].value
    return StackView(label, stack.top, stack.size)


def _pending(wire: game_pb2.Observation) -> PendingView | None:
    if not wire.HasField("pending"):
        return None
    pending = wire.pending
    options = tuple(parse_option(o.text) for o in sorted(pending.options, key=lambda o: o.index))
    return PendingView(pending.seat, DECISION_KIND[pending.kind], options)


def engine_observation(wire: game_pb2.Observation) -> Observation:
    """The engine's observation that ``wire`` was built from (``KeyError`` for an unknown enum value)."""
    no_market = {COMMODITY[p.commodity] for p in wire.prices if p.no_market}
    return Observation(
        viewer=wire.viewer if wire.HasField("viewer") else None,
        version=wire.version,
        phase=PHASE[wire.phase].value,
        round=wire.round,
        rounds=wire.rounds,
        start_seat=wire.start_seat,
        turn=wire.turn,
        cards_left_in_turn=wire.cards_left_in_turn,
        deck_positions=tuple((DECK[d.deck], d.position) for d in wire.deck_positions),
        arms=tuple((ARM[a.arm], a.notch) for a in wire.arms),
        prices=tuple((COMMODITY[p.commodity], p.price) for p in wire.prices),
        no_market=tuple(c for c in COMMODITIES if c in no_market),
        tax=wire.tax,
        town_hall=tuple(tuple(_stack(s) for s in row.stacks) for row in wire.town_hall),
        red_stack_size=wire.red_stack_size,
        town_discards=tuple(wire.town_discards),
        city=tuple(
            CityTileView(_square(t.square), t.building, t.owner if t.HasField("owner") else None)
            for t in wire.city
        ),
        plots=tuple((_square(p.square), p.seat) for p in wire.plots),
        mines=tuple(MineView(_square(m.square), m.tile, m.owner) for m in wire.mines),
        rocks=tuple((_square(r.square), r.tile) for r in wire.rocks),
        mine_stack_size=wire.mine_stack_size,
        mine_discard_size=wire.mine_discard_size,
        technology_taken=wire.technology_taken,
        mine_draws=wire.mine_draws,
        barbara_next=wire.barbara_next,
        patrician_bank=tuple((COLOR[p.color], p.count) for p in wire.patrician_bank),
        patrician_pool=tuple((COLOR[p.color], p.count) for p in wire.patrician_pool),
        council=tuple((COLOR[p.color], p.count) for p in wire.council),
        revealed_events=tuple(wire.revealed_events),
        current_event=wire.current_event if wire.HasField("current_event") else None,
        guild_setup_card=wire.guild_setup_card,
        mine_setup_card=wire.mine_setup_card,
        guild_sets_left=tuple(wire.guild_sets_left),
        building_in_hand=wire.building_in_hand if wire.HasField("building_in_hand") else None,
        players=tuple(_player(b) for b in wire.players),
        pending=_pending(wire),
        drawn=tuple(wire.drawn),
        kept_tile=wire.kept_tile if wire.HasField("kept_tile") else None,
        over=wire.over,
        scores=tuple(wire.scores),
        uses_events=wire.uses_events,
        free_action=wire.free_action,
        work=tuple(WorkStep(w.kind, w.seat, tuple(w.args)) for w in wire.work),
        mine_reshuffles=wire.mine_reshuffles,
        mine_discard_seen=tuple(wire.mine_discard_seen),
    )
