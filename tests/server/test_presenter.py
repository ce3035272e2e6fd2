"""Conversion between engine values and wire messages (the codec, wire/) and the server's encoder and
messages (server/messages.py)."""

from __future__ import annotations

import random

import pytest

from kutnahora import engine
from kutnahora import wire as codec
from kutnahora.engine import GameOptions
from kutnahora.engine.components import Action, Arm, Color, Commodity, Deck, Guild, Side
from kutnahora.engine.costs import mine_squares, option_cost, plot_squares
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.text import QUESTIONS, describe_option, unavailable_actions
from kutnahora.server import messages, reading
from kutnahora.server.records import ListedIndex
from kutnahora.server.store import result_to_json
from kutnahora.v1 import common_pb2, game_pb2, play_service_pb2
from kutnahora.wire import encoder, observations, values
from kutnahora.wire.encoder import ObservationEncoder
from kutnahora.wire.seat_observation import encode_observation


@pytest.mark.parametrize(
    ("table", "back", "wire_enum"),
    [
        (values.GUILD, values.GUILD_BACK, common_pb2.Guild),
        (values.COMMODITY, values.COMMODITY_BACK, common_pb2.Commodity),
        (values.DECK, values.DECK_BACK, common_pb2.Deck),
        (values.ARM, values.ARM_BACK, common_pb2.Arm),
        (values.COLOR, values.COLOR_BACK, common_pb2.Color),
        (values.ACTION, values.ACTION_BACK, common_pb2.Action),
        (values.SIDE, values.SIDE_BACK, common_pb2.Side),
        (values.DECISION_KIND, values.DECISION_KIND_BACK, game_pb2.DecisionKind),
    ],
)
def test_every_enum_maps_both_ways(table: dict, back: dict, wire_enum: object) -> None:
    wire_values = {v for v in wire_enum.values() if v != 0}  # type: ignore[attr-defined]
    assert set(table.values()) == wire_values
    assert all(back[number] is member for member, number in table.items())


def test_engine_enums_are_all_covered() -> None:
    for enum, table in (
        (Guild, values.GUILD),
        (Commodity, values.COMMODITY),
        (Deck, values.DECK),
        (Arm, values.ARM),
        (Color, values.COLOR),
        (Action, values.ACTION),
        (Side, values.SIDE),
        (DecisionKind, values.DECISION_KIND),
    ):
        assert set(table) == set(enum)


def random_states(players: int, seed: int) -> list[engine.GameState]:
    state = engine.new_game(GameOptions(players=players), seed)
    rng = random.Random(seed)
    states = []
    while not state.over:
        states.append(state.copy())
        engine.apply(state, rng.choice(engine.legal(state)))
    states.append(state)
    return states


def test_every_legal_option_round_trips_through_its_payload_index_and_text() -> None:
    seen_kinds = set()
    for players in (2, 3, 4):
        for state in random_states(players, seed=players):
            options = engine.legal(state)
            if state.pending is not None:
                seen_kinds.add(state.pending.kind)
            for index, option in enumerate(options):
                decision = codec.option_to_decision(option)
                assert codec.decision_to_option(decision) == option
                reparsed = game_pb2.Decision.FromString(decision.SerializeToString())
                assert codec.decision_to_option(reparsed) == option
                listed = reading.answer_from_wire(game_pb2.Answer(option_index=index))
                assert listed == ListedIndex(index) and options[index] == option
                assert reading.answer_from_wire(game_pb2.Answer(decision=decision)) == option
                text = engine.option_text(option)
                assert reading.answer_from_wire(game_pb2.Answer(option_text=text)) == option
    assert len(seen_kinds) >= 8


def test_the_fast_encoder_builds_exactly_the_reference_observation() -> None:
    for players in (2, 3, 4):
        encoder = ObservationEncoder("game-1")  # one per game, as the server has
        for state in random_states(players, seed=10 + players)[::2]:
            for viewer in [None, *range(players)]:
                obs = engine.observe(state, viewer)
                pending = state.pending
                question = QUESTIONS[pending.kind] if pending is not None else ""
                describe = cost = None
                if pending is not None and viewer == pending.seat:
                    kind = pending.kind

                    def describe(
                        option: engine.Option, state: engine.GameState = state, kind: DecisionKind = kind
                    ) -> str:
                        return describe_option(state, kind, option)

                    def cost(option: engine.Option, state: engine.GameState = state) -> engine.Cost:
                        return option_cost(state, option)

                squares = (mine_squares(state), plot_squares(state, viewer))
                missing = unavailable_actions(state) if cost is not None else []
                reference = codec.observation_to_wire(
                    obs, "game-1", question, describe, cost, squares, missing
                )
                fast = game_pb2.Observation.FromString(
                    encoder.encode(obs, question, describe, cost, lambda squares=squares: squares, missing)
                )
                assert fast == reference


def _reference(state: engine.GameState, viewer: int | None, game_id: str) -> game_pb2.Observation:
    """The plain observation: a fresh engine view, built into a message field by field."""
    pending = state.pending
    question = QUESTIONS[pending.kind] if pending is not None else ""
    describe = cost = None
    if pending is not None and viewer == pending.seat:
        kind = pending.kind

        def describe(option: engine.Option) -> str:
            return describe_option(state, kind, option)

        def cost(option: engine.Option) -> engine.Cost:
            return option_cost(state, option)

    squares = (mine_squares(state), plot_squares(state, viewer))
    unavailable = unavailable_actions(state) if cost is not None else []
    return codec.observation_to_wire(
        engine.observe(state, viewer), game_id, question, describe, cost, squares, unavailable
    )


def test_options_carry_their_cost_and_the_observation_the_open_squares() -> None:
    """Every listed option carries the engine's cost (a bot never recomputes a price); the observation
    lists the open mine squares (wood at the wood price) and the plots with the viewer's cost."""
    priced = set()
    for state in random_states(4, seed=17)[::3]:
        pending = state.pending
        if pending is None:
            continue
        wire = game_pb2.Observation.FromString(
            encode_observation(state, pending.seat, ObservationEncoder("g"))
        )
        for option, listed in zip(pending.options, wire.pending.options, strict=True):
            cost = option_cost(state, option)
            assert listed.cost == codec.option_cost_to_wire(cost)
            if cost.groschen:
                priced.add(pending.kind)
        wood = dict(engine.observe(state, None).prices)[Commodity.WOOD]
        assert [((e.square.row, e.square.col), e.wood, e.groschen) for e in wire.mine_squares] == [
            (square, amount, amount * wood) for square, amount in mine_squares(state)
        ]
        assert [((e.square.row, e.square.col), e.groschen) for e in wire.plot_squares] == plot_squares(
            state, pending.seat
        )
    assert {DecisionKind.PLOT_SQUARE, DecisionKind.RIGHTS_TILE} <= priced


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_servers_encoder_follows_a_whole_game_exactly(players: int) -> None:
    """The server's path (one encoder per game, its observer, cached parts and option entries), after
    every decision, for the seat that owes it first and then for everyone else with the same encoder:
    nothing private to the first viewer (its options, the tiles it draws) may reach the next."""
    state = engine.new_game(GameOptions(players=players, events=True), seed=40 + players)
    encoder = ObservationEncoder("game-9")
    rng = random.Random(players)
    drawing = 0
    while True:
        others = [None, *range(players)]
        viewers = others if state.pending is None else [state.pending.seat, *others]
        drawing += bool(state.drawn)
        for viewer in viewers:
            fast = game_pb2.Observation.FromString(encode_observation(state, viewer, encoder))
            assert fast == _reference(state, viewer, "game-9")
        if state.over:
            break
        engine.apply(state, rng.choice(engine.legal(state)))
    assert drawing > 0  # the game passed through mine-tile choices


def test_negative_numbers_and_absent_optional_fields_are_written_as_protobuf_writes_them() -> None:
    state = random_states(4, seed=21)[70]
    encoder = ObservationEncoder("g")
    for points, reputation in ((-3, -2), (0, 0), (-(2**31), 5)):
        state.players[1].points = points
        state.players[2].reputation = reputation
        for viewer in (None, 1):
            fast = game_pb2.Observation.FromString(encode_observation(state, viewer, encoder))
            assert fast == _reference(state, viewer, "g")
            assert fast.scores[1] == points
            assert fast.players[2].reputation == reputation
            assert fast.HasField("viewer") == (viewer is not None)


def test_an_observation_carries_the_whole_visible_game() -> None:
    state = random_states(4, seed=3)[60]
    wire = codec.observation_to_wire(engine.observe(state, None), "g")
    assert wire.version == state.version
    assert len(wire.players) == 4
    assert len(wire.prices) == len(Commodity)
    assert len(wire.arms) == len(Arm)
    assert len(wire.deck_positions) == 2
    assert len(wire.town_hall) > 0
    assert wire.rounds > 0
    assert [p.groschen for p in wire.players] == [p.groschen for p in state.players]


def test_the_observation_lists_what_the_town_built() -> None:
    """002 · The town builds: the discarded tiles are public, in the order the town built them."""
    for state in random_states(4, seed=5):
        if state.town_discards:
            wire = codec.observation_to_wire(engine.observe(state, None), "g")
            assert list(wire.town_discards) == state.town_discards
            return
    state = random_states(4, seed=5)[-1]
    state.town_discards.append(state.town_hall[0][0].tiles.pop(0))
    wire = codec.observation_to_wire(engine.observe(state, None), "g")
    assert list(wire.town_discards) == state.town_discards


def test_malformed_decisions_are_refused_with_a_reason() -> None:
    cases = [
        (game_pb2.Decision(), "none"),
        (game_pb2.Decision(play_card=game_pb2.PlayCard(card=1)), "play_card.action"),
        (
            game_pb2.Decision(
                play_card=game_pb2.PlayCard(card=1, action=common_pb2.ACTION_MINE, no_effect=True)
            ),
            "both",
        ),
        (game_pb2.Decision(choose_square=game_pb2.ChooseSquare()), "square"),
        (game_pb2.Decision(choose_patrician=game_pb2.ChoosePatrician()), "choose_patrician.color"),
    ]
    for decision, words in cases:
        with pytest.raises(codec.Malformed, match=words.replace(".", r"\.")):
            codec.decision_to_option(decision)


def test_results_survive_the_store_round_trip() -> None:
    state = random_states(3, seed=8)[-1]
    result = engine.result(state)
    assert result is not None
    data = result_to_json(result, [False, True, False])
    wire = messages.stored_result_to_wire(data)
    assert wire == codec.result_to_wire(result, [False, True, False])
    assert wire.seats[1].resigned


def test_components_convert_completely() -> None:
    components = engine.default_components()
    wire = codec.components_to_wire(components)
    assert len(wire.buildings) == len(components.buildings)
    assert len(wire.action_cards) == len(components.action_cards)
    assert len(wire.barbara_tiles) == len(components.barbara_tiles)
    assert len(wire.event_cards) == len(components.event_cards)
    assert len(wire.rounds_tracks) == len(components.rounds_tracks)
    assert wire.mine_area.rows == components.mine_area.rows
    for building, entry in zip(components.buildings, wire.buildings, strict=True):
        assert entry.id == building.id
        assert len(entry.effects) == len(building.effects)
        assert (entry.guild != 0) == (building.guild is not None)


def test_embedded_bytes_equal_a_built_message() -> None:
    inner = game_pb2.Observation(game_id="x", version=300, scores=[1, 2]).SerializeToString()
    built = game_pb2.DecisionRecord(version=5).SerializeToString()
    wrapped = encoder.embed(1, inner) + game_pb2.Event().SerializeToString()
    message = play_service_pb2.WatchGameResponse.FromString(wrapped)
    assert message.observation.version == 300
    assert encoder.varint(300) == b"\xac\x02"
    assert built


def test_the_cached_header_holds_only_fields_of_its_cache_key() -> None:
    """The seldom-changing header part is cached by the fields it is built from and nothing else."""
    state = random_states(2, seed=8)[-1]  # a finished game: most header fields are set
    obs = engine.observe(state, 0)._replace(current_event=3, building_in_hand=5)
    wire = game_pb2.Observation()
    observations.write_stable_header(wire, obs, "g")
    written = {field.name for field, _ in wire.ListFields()}
    assert written <= {*observations.STABLE_HEADER_FIELDS, "game_id"}
    assert {"phase", "round", "over", "current_event", "building_in_hand"} <= written
