"""The server's side of the wire: its own messages, the reading of every request, and the byte caches.

The game (:class:`kutnahora.server.game.LiveGame`) speaks engine values and domain records only; the
conversions of engine values both ways are :mod:`kutnahora.wire`'s. This module adds what is the server's:

- Wire to server: an answer becomes an engine option or a :class:`~kutnahora.server.records.ListedIndex`
  (:func:`answer_from_wire`, the one reading of a submission), a listing's status filter, a game's clock.
- Server to wire: summaries, decision records, clocks, statuses, the Play stream's messages, and refusals
  with their ``google.rpc`` details.
- The byte caches: :class:`GameFeed` keeps, per game, the serialised observation of the current version for
  each viewer, the prepared watch messages and the answers to recent decisions (returned again to an exact
  retry); :class:`ObservationEncoder` keeps the wire bytes of the parts of an observation, which it writes
  with :mod:`kutnahora.wire.observations`' functions.

Messages that embed cached bytes are assembled from the serialised parts with the generated
``*_FIELD_NUMBER`` constants (a serialised message is the concatenation of its fields). Malformed wire
input raises :class:`kutnahora.wire.Malformed`, which the service answers with ``INVALID_ARGUMENT``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from functools import partial
from operator import is_, itemgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from google.protobuf import duration_pb2, timestamp_pb2

from kutnahora.engine import Cost, GameOptions, GameState, Observation, Option, parse_option
from kutnahora.engine import components_hash as engine_components_hash
from kutnahora.engine import result as engine_result
from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.components import Commodity, ComponentSet, Square
from kutnahora.engine.costs import FREE, PRICED_KINDS, mine_squares, option_costs, plot_squares
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.text import QUESTIONS, describe_option, unavailable_actions
from kutnahora.engine.view import Observer, PendingView, PlayerView, WorkStep
from kutnahora.plumbing.errors import ServiceError, clip
from kutnahora.plumbing.status import REJECT_REASONS
from kutnahora.server.config import ClockConfig
from kutnahora.server.history import DETAIL_WINDOW
from kutnahora.server.records import (
    Answer,
    AppliedDecision,
    ClockReading,
    DecisionSource,
    GameStatus,
    ListedIndex,
    canonical_text,
)
from kutnahora.server.store import GameRow, SeatRow, result_from_json
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from kutnahora.wire import (
    Malformed,
    add_events,
    components_to_wire,
    decision_payload,
    decision_to_option,
    game_options_to_wire,
    option_cost_to_wire,
    result_to_wire,
)
from kutnahora.wire.observations import (
    STABLE_HEADER_FIELDS,
    SquareCosts,
    SquareCostsOf,
    Unavailable,
    add_boards,
    add_market,
    add_patricians,
    add_player_seldom,
    add_town_hall,
    write_stable_header,
)
from kutnahora.wire.values import ACTION, DECISION_KIND, enum_table, from_wire_enum

if TYPE_CHECKING:
    from kutnahora.server.game import LiveGame

M = TypeVar("M", game_pb2.Observation, game_pb2.PlayerBoard)


# --- Wire encoding helpers -----------------------------------------------------------------------------


def varint(value: int) -> bytes:
    """The protobuf varint encoding of a non-negative integer."""
    if value < _SMALL_VARINT_LIMIT:
        return _SMALL_VARINTS[value]
    return _varint(value)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL_VARINT_LIMIT = 4096  # field keys, lengths of most parts, versions: encoded once, looked up
_SMALL_VARINTS = [_varint(value) for value in range(_SMALL_VARINT_LIMIT)]


def embed(field_number: int, payload: bytes) -> bytes:
    """A length-delimited field (an embedded message) holding already serialised ``payload``.

    Concatenated with the serialisation of the rest of the enclosing message, it gives the whole
    message: the server wraps cached observation bytes this way instead of copying messages.
    """
    return varint(field_number << 3 | 2) + varint(len(payload)) + payload


# --- Reading requests -----------------------------------------------------------------------------------


def answer_from_wire(answer: game_pb2.Answer) -> Answer:
    """What a wire answer names: an engine option, or the index of a listed option.

    Raises :class:`Malformed` for an answer that cannot be read, whatever the options are; whether what it
    names is listed is the game's to say (:meth:`kutnahora.server.game.LiveGame.submit`).
    """
    which = answer.WhichOneof("answer")
    if which is None:
        raise Malformed("the answer sets none of option_index, decision or option_text")
    if which == "option_index":
        index = answer.option_index
        if index < 0:
            raise Malformed(f"option_index must not be negative, got {index}")
        return ListedIndex(index)
    if which == "decision":
        return decision_to_option(answer.decision)
    text = answer.option_text
    try:
        return parse_option(text)
    except ValueError as error:
        raise Malformed(f"option_text {clip(text)!r} is not an option's text ({clip(str(error))})") from None


def clock_from_wire(wire: game_pb2.ClockSettings, defaults: ClockConfig) -> ClockConfig:
    """A game's clock from the request, with the server's defaults for what is unset."""
    if wire.disabled:
        return ClockConfig(defaults.decision_ms, defaults.bank_ms, defaults.max_strikes, enabled=False)
    decision_ms = to_ms(wire.decision_time) if wire.HasField("decision_time") else defaults.decision_ms
    bank_ms = to_ms(wire.time_bank) if wire.HasField("time_bank") else defaults.bank_ms
    if decision_ms <= 0:
        raise Malformed(f"clock.decision_time must be positive, got {decision_ms} ms")
    if bank_ms < 0:
        raise Malformed(f"clock.time_bank must not be negative, got {bank_ms} ms")
    day = 86_400_000
    if decision_ms > day or bank_ms > day:
        raise Malformed("clock.decision_time and clock.time_bank must each be at most one day")
    if wire.max_strikes < 0:
        raise Malformed(f"clock.max_strikes must not be negative, got {wire.max_strikes}")
    # A game that sets any clock field asks for a clock, even on a server whose games have none by default.
    asked = wire.HasField("decision_time") or wire.HasField("time_bank") or wire.max_strikes > 0
    return ClockConfig(
        decision_ms, bank_ms, wire.max_strikes or defaults.max_strikes, enabled=defaults.enabled or asked
    )


# --- Results, times and durations ---------------------------------------------------------------------


def stored_result_to_wire(data: dict[str, Any]) -> game_pb2.GameResult:
    """The wire result of a result kept by the store."""
    result, resigned = result_from_json(data)
    return result_to_wire(result, resigned)


def timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    """A wire timestamp of a Unix time in seconds."""
    whole = int(seconds)
    return timestamp_pb2.Timestamp(seconds=whole, nanos=int((seconds - whole) * 1e9))


def duration_ms(milliseconds: int) -> duration_pb2.Duration:
    """A wire duration of a number of milliseconds."""
    return duration_pb2.Duration(seconds=milliseconds // 1000, nanos=(milliseconds % 1000) * 1_000_000)


def to_ms(duration: duration_pb2.Duration) -> int:
    """A wire duration in whole milliseconds."""
    return duration.seconds * 1000 + duration.nanos // 1_000_000


# --- The observation encoder ----------------------------------------------------------------------------

_CACHE_LIMIT = 20_000
_COST_BYTES: dict[Cost, bytes] = {}


def _cost_field(cost: Cost) -> bytes:
    """LegalOption field 5 (``cost``) as wire bytes; nothing for an option that costs nothing."""
    encoded = _COST_BYTES.get(cost)
    if encoded is None:
        if len(_COST_BYTES) >= _CACHE_LIMIT:
            _COST_BYTES.clear()
        encoded = _COST_BYTES[cost] = embed(5, option_cost_to_wire(cost).SerializeToString()) if cost else b""
    return encoded


class _PartCache(Generic[M]):
    """A small map from an engine value to the serialised wire part it gives, emptied when full.

    A part is written into an empty ``message`` (an observation, or a player's board for parts of it).
    """

    __slots__ = ("entries", "last", "limit", "message", "recent")

    def __init__(self, limit: int, message: type[M]) -> None:
        self.entries: dict[object, bytes] = {}
        self.limit = limit
        self.message: type[M] = message
        self.last: tuple[tuple[object, ...], bytes] | None = None
        self.recent: tuple[object, bytes] | None = None

    def part(self, key: object, build: Callable[[M], None]) -> bytes:
        """The serialised part for ``key``; on a miss ``build`` writes it into an empty message. A key equal
        to the last one's is found by comparing the two, which costs less than hashing it."""
        recent = self.recent
        if recent is not None and recent[0] == key:
            return recent[1]
        value = self.entries.get(key)
        if value is None:
            wire = self.message()
            build(wire)
            value = wire.SerializeToString()
            if len(self.entries) >= self.limit:
                self.entries.clear()
            self.entries[key] = value
        self.recent = (key, value)
        return value

    def part_of(self, values: tuple[object, ...], build: Callable[[M], None]) -> bytes:
        """:meth:`part` for a key made of immutable values; when they are the very objects of the last
        call (an :class:`kutnahora.engine.Observer` hands back unchanged parts as the same objects), the last
        part is returned without hashing anything."""
        found = self._last_of(values)
        if found is None:
            found = self.part(values, build)
            self.last = (values, found)
        return found

    def encoded_of(self, values: tuple[object, ...], make: Callable[[], bytes]) -> bytes:
        """:meth:`part_of` for a part that ``make`` writes directly as wire bytes."""
        found = self._last_of(values)
        if found is None:
            found = self.entries.get(values)
            if found is None:
                if len(self.entries) >= self.limit:
                    self.entries.clear()
                found = self.entries[values] = make()
            self.last = (values, found)
        return found

    def _last_of(self, values: tuple[object, ...]) -> bytes | None:
        """The last part, if ``values`` are the very objects it was made of."""
        last = self.last
        if last is not None and len(last[0]) == len(values) and all(map(is_, last[0], values)):
            return last[1]
        return None


_table_parts = itemgetter(
    *(
        Observation._fields.index(name)
        for name in (
            "deck_positions",
            "arms",
            "prices",
            "no_market",
            "town_hall",
            "city",
            "plots",
            "mines",
            "rocks",
        )
    )
)
"""The observation's market (four parts), town hall and boards (four parts), in that order."""
_stable_header_key = itemgetter(*(Observation._fields.index(name) for name in STABLE_HEADER_FIELDS))


def _key(field_number: int, wire_type: int) -> bytes:
    return varint(field_number << 3 | wire_type)


_N = game_pb2.Observation
_VERSION, _VIEWER = _key(_N.VERSION_FIELD_NUMBER, 0), _key(_N.VIEWER_FIELD_NUMBER, 0)
_TURN, _CARDS_LEFT = _key(_N.TURN_FIELD_NUMBER, 0), _key(_N.CARDS_LEFT_IN_TURN_FIELD_NUMBER, 0)
_DRAWN, _KEPT_TILE = _key(_N.DRAWN_FIELD_NUMBER, 2), _key(_N.KEPT_TILE_FIELD_NUMBER, 0)
_SCORES = _key(_N.SCORES_FIELD_NUMBER, 2)


def _int32(value: int) -> bytes:
    """An int32 or int64 value as a varint (a negative one takes ten bytes, as protobuf writes it)."""
    return varint(value) if value >= 0 else varint(value + (1 << 64))


def _volatile(obs: Observation) -> bytes:
    """The header fields that change with nearly every decision, written directly as wire bytes."""
    out = [_VERSION + varint(obs.version)] if obs.version else []
    if obs.viewer is not None:
        out.append(_VIEWER + varint(obs.viewer))
    if obs.turn:
        out.append(_TURN + varint(obs.turn))
    if obs.cards_left_in_turn:
        out.append(_CARDS_LEFT + varint(obs.cards_left_in_turn))
    if obs.drawn:
        packed = b"".join([varint(tile) for tile in obs.drawn])
        out.append(_DRAWN + varint(len(packed)) + packed)
    if obs.kept_tile is not None:
        out.append(_KEPT_TILE + varint(obs.kept_tile))
    if obs.scores:
        packed = b"".join([_int32(score) for score in obs.scores])
        out.append(_SCORES + varint(len(packed)) + packed)
    return b"".join(out)


_WORK, _RESHUFFLES = _key(_N.WORK_FIELD_NUMBER, 2), _key(_N.MINE_RESHUFFLES_FIELD_NUMBER, 0)
_DISCARD_SEEN = _key(_N.MINE_DISCARD_SEEN_FIELD_NUMBER, 2)
_STEP_KIND, _STEP_SEAT = _key(1, 2), _key(2, 0)
_STEP_ARGS = _key(3, 2)
_WORK_STEPS: dict[WorkStep, bytes] = {}


def _packed(key: bytes, values: Sequence[int]) -> bytes:
    """A packed repeated int32 field (nothing when empty)."""
    if not values:
        return b""
    packed = b"".join([_int32(value) for value in values])
    return key + varint(len(packed)) + packed


def _work_step(step: WorkStep) -> bytes:
    """Observation field ``work``: one ``WorkStep`` entry as wire bytes (built once per distinct step)."""
    encoded = _WORK_STEPS.get(step)
    if encoded is None:
        if len(_WORK_STEPS) >= _CACHE_LIMIT:
            _WORK_STEPS.clear()
        body = _string_field(1, step.kind)
        if step.seat:
            body += _STEP_SEAT + _int32(step.seat)
        body += _packed(_STEP_ARGS, step.args)
        encoded = _WORK_STEPS[step] = _WORK + varint(len(body)) + body
    return encoded


def _header_tail(obs: Observation) -> bytes:
    """The engine's work, the mine reshuffles and the viewer's discards seen (the observation's last
    fields before the square costs), written directly as wire bytes: they change too often to cache."""
    out = [_work_step(step) for step in obs.work]
    if obs.mine_reshuffles:
        out.append(_RESHUFFLES + _int32(obs.mine_reshuffles))
    if obs.mine_discard_seen:
        out.append(_packed(_DISCARD_SEEN, obs.mine_discard_seen))
    return b"".join(out)


_MINE_SQUARE = _key(_N.MINE_SQUARES_FIELD_NUMBER, 2)
_PLOT_SQUARE = _key(_N.PLOT_SQUARES_FIELD_NUMBER, 2)
_SQUARE_COSTS: dict[tuple[bytes, Square, int, int], bytes] = {}


def _square_cost(key: bytes, square: Square, wood: int, groschen: int) -> bytes:
    """One ``SquareCost`` entry of field ``key`` as wire bytes (built once per distinct entry)."""
    entry = (key, square, wood, groschen)
    encoded = _SQUARE_COSTS.get(entry)
    if encoded is None:
        row, col = square
        where = (_key(1, 0) + _int32(row) if row else b"") + (_key(2, 0) + _int32(col) if col else b"")
        body = _key(1, 2) + varint(len(where)) + where
        if wood:
            body += _key(2, 0) + _int32(wood)
        if groschen:
            body += _key(3, 0) + _int32(groschen)
        if len(_SQUARE_COSTS) >= _CACHE_LIMIT:
            _SQUARE_COSTS.clear()
        encoded = _SQUARE_COSTS[entry] = key + varint(len(body)) + body
    return encoded


def _mine_square_bytes(obs: Observation, mines: Sequence[tuple[Square, int]]) -> bytes:
    """Observation field ``mine_squares`` as wire bytes (what :func:`_add_mine_squares` writes)."""
    wood = dict(obs.prices)[Commodity.WOOD]
    return b"".join([_square_cost(_MINE_SQUARE, square, amount, amount * wood) for square, amount in mines])


def _plot_square_bytes(plots: Sequence[tuple[Square, int]]) -> bytes:
    """Observation field ``plot_squares`` as wire bytes (what :func:`_add_plot_squares` writes)."""
    return b"".join([_square_cost(_PLOT_SQUARE, square, 0, groschen) for square, groschen in plots])


_SeenPlayer = tuple[PlayerView, bytes, tuple[object, ...], bytes]
"""A seat's last board: its view, its wire bytes, and the key and bytes of the part that changes seldom."""


def _board_counters(player: PlayerView) -> bytes:
    """A ``PlayerBoard``'s fields that change often (all but ``add_player_seldom``'s), serialised."""
    return game_pb2.PlayerBoard(
        seat=player.seat,
        groschen=player.groschen,
        reputation=player.reputation,
        points=player.points,
        mine_ore=player.mine_ore,
        income=player.income,
        tax_due=player.tax_due,
        slots=player.slots,
        pelicans=player.pelicans,
        pelicans_used=player.pelicans_used,
        miners_pool=player.miners_pool,
        miners_reserve=player.miners_reserve,
        hand=player.hand,
    ).SerializeToString()


_PLAYER_KEY = _key(_N.PLAYERS_FIELD_NUMBER, 2)
_P = game_pb2.PendingDecision
_PENDING_SEAT, _PENDING_KIND = _key(_P.SEAT_FIELD_NUMBER, 0), _key(_P.KIND_FIELD_NUMBER, 0)
_OPTION_KEY = _key(_P.OPTIONS_FIELD_NUMBER, 2)
_L = game_pb2.LegalOption
_OPTION_INDEX = _key(_L.INDEX_FIELD_NUMBER, 0)


class OptionEntries:
    """Serialised ``LegalOption`` entries without a cost, by decision kind, option, whether it is
    described and position; and their bodies without index and cost, by decision kind, option and whether
    it is described. See :meth:`ObservationEncoder._encode_pending`."""

    __slots__ = ("bodies", "entries")

    def __init__(self) -> None:
        self.entries: dict[tuple[DecisionKind, Option, bool, int], bytes] = {}
        self.bodies: dict[tuple[DecisionKind, Option, bool], bytes] = {}


_SHARED_OPTIONS: ComponentCache[OptionEntries] = ComponentCache(lambda _: OptionEntries())


def shared_option_entries(components: ComponentSet) -> OptionEntries:
    """The option entries every game of ``components`` shares (one set per server; a few in tests)."""
    return _SHARED_OPTIONS.get(components)


class ObservationEncoder:
    """Serialises observations of one game, reusing the wire bytes of every part that did not change.

    A serialised protobuf message is the concatenation of its fields, and concatenated messages merge,
    so an observation is written as independent parts (the scalars, the version, the market, the town
    hall, the boards, the patricians, each player, the pending decision), each cached by the engine
    value it comes from. The engine's view comes from an :class:`kutnahora.engine.Observer`, which hands back
    the very same part objects while their inputs are unchanged, so most parts are found by identity
    before any hashing. Between two versions most parts are unchanged, and every viewer of one version
    shares them. The result parses to exactly what :func:`observation_to_wire` builds.
    """

    __slots__ = (
        "_boards",
        "_headers",
        "_last_players",
        "_last_tables",
        "_market",
        "_mine_squares",
        "_own_options",
        "_patricians",
        "_player_seldom",
        "_plot_squares",
        "_questions",
        "_shared_options",
        "_town_hall",
        "game_id",
        "observer",
    )

    def __init__(self, game_id: str, limit: int = 8, options: OptionEntries | None = None) -> None:
        self.game_id = game_id
        self.observer = Observer()
        observation = game_pb2.Observation
        self._headers = _PartCache(limit * 4, observation)
        self._market = _PartCache(limit, observation)
        self._town_hall = _PartCache(limit, observation)
        self._boards = _PartCache(limit, observation)
        self._patricians = _PartCache(limit, observation)
        self._player_seldom = _PartCache(limit * 4, game_pb2.PlayerBoard)
        self._last_players: dict[int, _SeenPlayer] = {}
        self._last_tables: tuple[tuple[object, ...], bytes] | None = None
        self._shared_options = options if options is not None else OptionEntries()
        self._own_options = OptionEntries()
        self._questions: dict[str, bytes] = {}
        self._mine_squares = _PartCache(limit, observation)
        self._plot_squares = _PartCache(limit, observation)

    def encode(
        self,
        obs: Observation,
        question: str = "",
        describe: Callable[[Option], str] | None = None,
        cost: Callable[[Option], Cost] | None = None,
        squares: Callable[[], SquareCosts] | None = None,
        unavailable: Sequence[Unavailable] = (),
        costs: Sequence[Cost] | None = None,
        square_costs: SquareCostsOf | None = None,
    ) -> bytes:
        """The serialised wire observation of ``obs``.

        ``cost`` gives each option's cost; ``costs`` may give them all instead, in the order of the options
        (None, without ``cost``: every option is free). ``squares`` is called only when the boards, the
        prices or the viewer's reputation changed; ``square_costs`` may give the mine squares and the plots
        apart instead, each called only when what it gives may have changed.
        """
        game_id = self.game_id
        parts = [
            self._headers.part(_stable_header_key(obs), lambda w: write_stable_header(w, obs, game_id)),
            _header_tail(obs),
            _volatile(obs),
        ]

        parts.append(self._tables(obs))
        parts.append(
            self._patricians.part(
                (obs.patrician_bank, obs.patrician_pool, obs.council), lambda w: add_patricians(w, obs)
            )
        )
        last_players = self._last_players
        for index, player in enumerate(obs.players):
            seen = last_players.get(index)
            if seen is None or seen[0] is not player:
                seen = last_players[index] = self._player(player, seen)
            parts.append(seen[1])
        pending = obs.pending
        if pending is not None:
            if costs is None and cost is not None:
                costs = [cost(option) for option in pending.options]
            parts.append(self._encode_pending(pending, question, describe, costs, unavailable))
        if squares is not None:
            square_costs = (lambda: squares()[0], lambda: squares()[1])
        if square_costs is not None:
            # mine squares are the same for every viewer; plot costs depend on the viewer's reputation
            mines_of, plots_of = square_costs
            parts.append(
                self._mine_squares.encoded_of(
                    (obs.mines, obs.rocks, obs.prices), lambda: _mine_square_bytes(obs, mines_of())
                )
            )
            viewer = obs.viewer
            reputation = None if viewer is None else obs.players[viewer].reputation
            parts.append(
                self._plot_squares.encoded_of(
                    (obs.city, obs.plots, reputation), lambda: _plot_square_bytes(plots_of())
                )
            )
        return b"".join(parts)

    def _tables(self, obs: Observation) -> bytes:
        """The market, the town hall and the boards: while the observer hands back the very same parts,
        the bytes of the last call, else each of the three from its own cache."""
        now = _table_parts(obs)
        last = self._last_tables
        if last is not None and all(map(is_, last[0], now)):
            return last[1]
        encoded = (
            self._market.part_of(now[:4], lambda w: add_market(w, obs))
            + self._town_hall.part_of(now[4:5], lambda w: add_town_hall(w, obs))
            + self._boards.part_of(now[5:], lambda w: add_boards(w, obs))
        )
        self._last_tables = (now, encoded)
        return encoded

    def _player(self, player: PlayerView, seen: _SeenPlayer | None) -> _SeenPlayer:
        """Observation field 34 (one ``PlayerBoard``), with what it was made of: the parts that change
        seldom (guilds, production, plots, houses, buildings) are kept with the seat's last board and
        cached by value; the counters, hand and slots are serialised each time."""
        key = (
            player.guild_set,
            player.guilds,
            player.production,
            player.houses_removed,
            player.plots,
            player.buildings,
        )
        if seen is not None and seen[2] == key:
            seldom = seen[3]
        else:
            seldom = self._player_seldom.part(key, partial(add_player_seldom, player=player))
        body = _board_counters(player) + seldom
        return (player, _PLAYER_KEY + varint(len(body)) + body, key, seldom)

    def _encode_pending(
        self,
        pending: PendingView,
        question: str,
        describe: Callable[[Option], str] | None,
        costs: Sequence[Cost] | None = None,
        unavailable: Sequence[Unavailable] = (),
    ) -> bytes:
        """Observation field 35 (``pending``), written directly as wire bytes.

        The options change with nearly every decision, so instead of building messages, each option's
        ``LegalOption`` entry (index, payload, text, description) is serialised once per component set,
        decision kind, option and position, and reused; only an option that costs something has its entry
        written again, with the cost (``costs``, one for each option) at its end. These
        caches are shared by every game of the component set (:class:`OptionEntries`), so a game holds
        none of its own: a description depends only on the component set, the decision kind and the
        option, as :func:`kutnahora.engine.text.describe_option` words it, except a guild set's (it names
        the game's guild sets), whose entries the game keeps to itself.
        """
        parts = []
        if pending.seat:
            parts.append(_PENDING_SEAT + varint(pending.seat))
        parts.append(_PENDING_KIND + varint(DECISION_KIND[pending.kind]))
        if question:
            encoded = self._questions.get(question)
            if encoded is None:
                encoded = self._questions[question] = _string_field(_P.QUESTION_FIELD_NUMBER, question)
            parts.append(encoded)
        shared = self._own_options if pending.kind is DecisionKind.GUILD_SET else self._shared_options
        entries, bodies = shared.entries, shared.bodies
        if len(entries) >= _CACHE_LIMIT:
            entries.clear()
        if len(bodies) >= _CACHE_LIMIT:
            bodies.clear()
        kind, described = pending.kind, describe is not None
        for index, option in enumerate(pending.options):
            option_cost = None if costs is None else costs[index]
            if option_cost is None or option_cost is FREE or not option_cost:
                key = (kind, option, described, index)
                entry = entries.get(key)
                if entry is None:
                    head = _option_head(bodies, kind, option, index, describe)
                    entry = entries[key] = _OPTION_KEY + varint(len(head)) + head
            else:
                head = _option_head(bodies, kind, option, index, describe) + _cost_field(option_cost)
                entry = _OPTION_KEY + varint(len(head)) + head
            parts.append(entry)
        for missing in unavailable:
            parts.append(_unavailable_field(missing))
        return embed(_N.PENDING_FIELD_NUMBER, b"".join(parts))


def _option_head(
    bodies: dict[tuple[DecisionKind, Option, bool], bytes],
    kind: DecisionKind,
    option: Option,
    index: int,
    describe: Callable[[Option], str] | None,
) -> bytes:
    """A ``LegalOption``'s index, payload, text and description as wire bytes. The same option is often
    listed again at another position, so its body without the index is kept apart, in ``bodies``."""
    body_key = (kind, option, describe is not None)
    body = bodies.get(body_key)
    if body is None:
        body = embed(_L.DECISION_FIELD_NUMBER, decision_payload(option).SerializeToString()) + _string_field(
            _L.TEXT_FIELD_NUMBER, canonical_text(option)
        )
        if describe is not None:
            body += _string_field(_L.DESCRIPTION_FIELD_NUMBER, describe(option))
        bodies[body_key] = body
    return _OPTION_INDEX + varint(index) + body if index else body


_UNAVAILABLE: dict[Unavailable, bytes] = {}


def _unavailable_field(missing: Unavailable) -> bytes:
    """PendingDecision field ``unavailable`` (one ``UnavailableAction``) as wire bytes."""
    encoded = _UNAVAILABLE.get(missing)
    if encoded is None:
        if len(_UNAVAILABLE) >= _CACHE_LIMIT:
            _UNAVAILABLE.clear()
        card, action, reason = missing
        wire = game_pb2.UnavailableAction(card=card, action=ACTION[action], reason=reason)
        encoded = _UNAVAILABLE[missing] = embed(_P.UNAVAILABLE_FIELD_NUMBER, wire.SerializeToString())
    return encoded


def _string_field(field_number: int, text: str) -> bytes:
    """A string field, as wire bytes (empty text writes nothing, as proto3 does)."""
    if not text:
        return b""
    return embed(field_number, text.encode())


# --- Statuses, sources and refusals ---------------------------------------------------------------------

STATUS, STATUS_BACK = enum_table(GameStatus, game_pb2.GameStatus, "GAME_STATUS_")
SOURCE = enum_table(DecisionSource, game_pb2.DecisionSource, "DECISION_SOURCE_")[0]


def status_from_wire(number: int) -> GameStatus | None:
    """The game status a listing filter names (None: any); raises :class:`Malformed` for an unknown one."""
    if number == game_pb2.GAME_STATUS_UNSPECIFIED:
        return None
    return from_wire_enum(STATUS_BACK, number, "status")


def reject_reason(error: ServiceError) -> Any:
    """The ``RejectReason`` of a refusal."""
    return REJECT_REASONS[error.reason]


def rejected_message(error: ServiceError, version: int) -> bytes:
    """A Play stream's ``DecisionRejected`` for a refusal, at the game's current version."""
    rejected = play_service_pb2.DecisionRejected(
        reason=reject_reason(error), code=error.code.value[0], message=error.message, version=version
    )
    return play_service_pb2.PlayResponse(rejected=rejected).SerializeToString()


def accepted_message(record: AppliedDecision) -> bytes:
    """A Play stream's ``DecisionAccepted`` for an applied decision."""
    accepted = play_service_pb2.DecisionAccepted(version=record.version, next_version=record.version + 1)
    return play_service_pb2.PlayResponse(accepted=accepted).SerializeToString()


# --- Games: summaries, records, clocks and results -------------------------------------------------------


def encode_observation(state: GameState, viewer: int | None, encoder: ObservationEncoder) -> bytes:
    """The serialised wire observation of ``state`` for a seat or a spectator (None).

    The engine decides what the viewer may see (the encoder's :class:`kutnahora.engine.Observer` gives what
    :func:`kutnahora.engine.observe` gives, rebuilding only what changed); this only words the pending
    decision, adds the open mine squares and plots with their costs, and, for the seat that owes the
    decision, describes each legal option and gives its cost.
    """
    obs = encoder.observer.observe(state, viewer)

    squares = (partial(mine_squares, state), partial(plot_squares, state, viewer))
    pending = state.pending
    if pending is None:
        return encoder.encode(obs, square_costs=squares)
    question = QUESTIONS.get(pending.kind, "")
    if viewer != pending.seat:
        return encoder.encode(obs, question, square_costs=squares)
    kind = pending.kind

    def describe(option: Option) -> str:
        return describe_option(state, kind, option)

    costs = option_costs(state) if kind in PRICED_KINDS else None
    return encoder.encode(obs, question, describe, None, None, unavailable_actions(state), costs, squares)


def clock_settings(clock: ClockConfig) -> game_pb2.ClockSettings:
    """A game's clock as wire settings."""
    return game_pb2.ClockSettings(
        decision_time=duration_ms(clock.decision_ms),
        time_bank=duration_ms(clock.bank_ms),
        max_strikes=clock.max_strikes,
        disabled=not clock.enabled,
    )


def clock_message(reading: ClockReading) -> game_pb2.Clock:
    """The running clock of the pending decision."""
    return game_pb2.Clock(
        seat=reading.seat,
        deadline=timestamp(reading.deadline),
        time_bank_left=duration_ms(reading.bank_ms),
        decision_time=duration_ms(reading.decision_ms),
    )


def result_message(game: LiveGame) -> game_pb2.GameResult | None:
    """A game's final result, once finished."""
    result = game.result()
    return None if result is None else result_to_wire(result, game.resigned())


def summary(game: LiveGame) -> game_pb2.GameSummary:
    """A loaded game's summary. It never holds the seed."""
    wire = game_pb2.GameSummary(
        game_id=game.game_id,
        options=game_options_to_wire(game.options),
        clock=clock_settings(game.clock),
        status=STATUS[game.status],
        version=game.state.version,
        created_at=timestamp(game.created_at),
        updated_at=timestamp(game.updated_at),
        rules_version=game.rules_version,
        label=game.label,
        abandon_reason=game.abandon_reason,
        components_hash=game.components_hash,
    )
    for seat in game.seats:
        wire.seats.add(
            seat=seat.seat,
            joined=seat.joined,
            name=seat.name,
            resigned=seat.resigned,
            strikes=seat.strikes,
            replaced=game.replaced(seat.seat),
            time_bank_left=duration_ms(seat.bank_ms),
        )
    pending = game.state.pending
    if pending is not None and not game.ended:
        wire.pending_seat = pending.seat
        wire.pending_kind = DECISION_KIND[pending.kind]
    result = result_message(game)
    if result is not None:
        wire.result.CopyFrom(result)
    return wire


def row_summary(row: GameRow, seats: Sequence[SeatRow]) -> game_pb2.GameSummary:
    """The summary of a game that is not loaded, from its store record."""
    clock = ClockConfig.from_json(row.clock)
    status = STATUS.get(GameStatus(row.status), game_pb2.GAME_STATUS_UNSPECIFIED)
    wire = game_pb2.GameSummary(
        game_id=row.game_id,
        options=game_options_to_wire(
            GameOptions(row.players, row.events, row.guild_setup_card, row.mine_setup_card)
        ),
        clock=clock_settings(clock),
        status=status,
        version=row.version,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at or row.created_at),
        rules_version=row.rules_version,
        label=row.label,
        abandon_reason=row.abandon_reason,
        components_hash=row.components_hash,
    )
    by_seat = {s.seat: s for s in seats}
    for index in range(row.players):
        seat = by_seat.get(index, SeatRow(index))
        wire.seats.add(seat=index, joined=seat.joined, name=seat.name, resigned=seat.resigned)
    if row.result is not None:
        wire.result.CopyFrom(stored_result_to_wire(row.result))
    return wire


def record_message(record: AppliedDecision) -> game_pb2.DecisionRecord:
    """One decision of a game's history as a wire record."""
    return game_pb2.DecisionRecord(
        version=record.version,
        seat=record.seat,
        decision=decision_payload(record.option),
        text=record.text,
        source=SOURCE[record.source],
        applied_at=timestamp(record.applied_at),
        think_time=duration_ms(record.think_ms),
        kind=DECISION_KIND[record.kind] if record.kind is not None else game_pb2.DECISION_KIND_UNSPECIFIED,
    )


def components_response(components: ComponentSet, rules_version: int) -> bytes:
    """The serialised ``GetComponentsResponse`` (built once by the server and reused)."""
    tail = game_service_pb2.GetComponentsResponse(
        rules_version=rules_version, components_hash=engine_components_hash(components)
    ).SerializeToString()
    body = components_to_wire(components).SerializeToString()
    return embed(game_service_pb2.GetComponentsResponse.COMPONENTS_FIELD_NUMBER, body) + tail


# --- One game's messages and their byte caches ----------------------------------------------------------

SPECTATOR = -1
"""The viewer key of a spectator in caches (seats are 0..3)."""

WATCH_WINDOW = 64
"""How many recent versions keep their prepared watch messages."""

RESPONSE_WINDOW = DETAIL_WINDOW
"""How many recent decisions keep their serialised ``SubmitDecisionResponse`` (for exact retries): as
many as keep their options, without which a retry is replayed anyway."""

_GET_OBSERVATION = play_service_pb2.GetObservationResponse.OBSERVATION_FIELD_NUMBER
_WATCH_OBSERVATION = play_service_pb2.WatchGameResponse.OBSERVATION_FIELD_NUMBER
_YOUR_TURN = play_service_pb2.PlayResponse.YOUR_TURN_FIELD_NUMBER
_TURN_OBSERVATION = play_service_pb2.YourTurn.OBSERVATION_FIELD_NUMBER
_TURN_CLOCK = play_service_pb2.YourTurn.CLOCK_FIELD_NUMBER
_GAME_ENDED = play_service_pb2.PlayResponse.GAME_ENDED_FIELD_NUMBER
_ENDED_OBSERVATION = play_service_pb2.GameEnded.OBSERVATION_FIELD_NUMBER


class GameFeed:
    """The wire side of one loaded game: every message about it, and the caches of their bytes.

    It listens to its game (:class:`kutnahora.server.game.GameListener`): after each change it prepares the
    new version's watch messages for the open watch streams and the observation of the seat whose Play
    stream waits for it, while the game's data is still in the processor's caches.
    """

    def __init__(self, game: LiveGame) -> None:
        self.game = game
        self.encoder = ObservationEncoder(
            game.game_id, options=shared_option_entries(game.services.components)
        )
        self._observations: dict[int, tuple[int, bytes]] = {}
        self._watch_cache: dict[tuple[int, int], bytes] = {}
        self._watchers: dict[int, int] = {}  # viewer key -> open watch streams
        self._responses: dict[int, bytes] = {}  # version -> SubmitDecisionResponse

    # --- the listener ------------------------------------------------------------------------------------

    def changed(self, new_version: bool, waiting_seat: int | None) -> None:
        """Prepare the new version's messages (see :class:`kutnahora.server.game.GameListener`)."""
        if new_version:
            self._prepare_watch_messages()
        if waiting_seat is not None:
            self.observation(waiting_seat)

    def ended(self, playing: Sequence[int]) -> None:
        """An ended game changes no more: its few last observations need none of the parts and option
        entries cached during play, which would otherwise stay loaded with it. The last observations of
        the seats whose Play streams are about to send them (``playing``) are built first, from those
        parts: built afresh they would cost several times more."""
        for seat in playing:
            try:
                self.observation(seat)
            except Exception:  # left for the stream to meet, as after any change
                self.game.services.log.exception("observation could not be built", game_id=self.game.game_id)
                break
        self.encoder = ObservationEncoder(
            self.game.game_id, options=shared_option_entries(self.game.services.components)
        )

    # --- observations ------------------------------------------------------------------------------------

    def observation(self, viewer: int | None) -> bytes:
        """The serialised observation of the current version for a seat or a spectator (built once)."""
        key = SPECTATOR if viewer is None else viewer
        game = self.game
        version = game.state.version
        cached = self._observations.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        started = time.perf_counter()
        data = encode_observation(game.state, viewer, self.encoder)
        game.services.metrics.observation_build.observe(time.perf_counter() - started)
        self._observations[key] = (version, data)
        return data

    def get_observation_response(self, viewer: int | None) -> bytes:
        """The serialised ``GetObservationResponse`` of the current version."""
        tail = play_service_pb2.GetObservationResponse(status=STATUS[self.game.status])
        reading = self.game.clock_reading()
        if reading is not None:
            tail.clock.CopyFrom(clock_message(reading))
        return embed(_GET_OBSERVATION, self.observation(viewer)) + tail.SerializeToString()

    def your_turn(self, seat: int) -> bytes:
        """A Play stream's ``YourTurn`` for the current version."""
        turn = embed(_TURN_OBSERVATION, self.observation(seat))
        reading = self.game.clock_reading()
        if reading is not None:
            turn += embed(_TURN_CLOCK, clock_message(reading).SerializeToString())
        return embed(_YOUR_TURN, turn)

    def game_ended(self, seat: int) -> bytes:
        """A Play stream's ``GameEnded``, with the seat's last observation."""
        ended = play_service_pb2.GameEnded(status=STATUS[self.game.status])
        result = result_message(self.game)
        if result is not None:
            ended.result.CopyFrom(result)
        body = ended.SerializeToString() + embed(_ENDED_OBSERVATION, self.observation(seat))
        return embed(_GAME_ENDED, body)

    # --- answers to decisions ----------------------------------------------------------------------------

    async def response(self, record: AppliedDecision) -> bytes:
        """The serialised ``SubmitDecisionResponse`` of a decision: the same bytes for every retry."""
        cached = self._responses.get(record.version)
        if cached is not None:
            return cached
        events = record.events
        if events is None:
            events = await asyncio.to_thread(self.game.replay_events, record.version)
        response = play_service_pb2.SubmitDecisionResponse(
            decision=record_message(record), version=record.version + 1, game_over=record.game_over
        )
        add_events(response.events, events)
        data = response.SerializeToString()
        if record.events is not None:
            responses = self._responses
            responses[record.version] = data
            if len(responses) > RESPONSE_WINDOW:
                oldest = self.game.version - RESPONSE_WINDOW
                for version in [v for v in responses if v < oldest]:
                    del responses[version]
        return data

    # --- watch messages ----------------------------------------------------------------------------------

    def add_watcher(self, viewer: int | None) -> None:
        """Count a watch stream, so that each new version's message is prepared for its viewer."""
        key = SPECTATOR if viewer is None else viewer
        self._watchers[key] = self._watchers.get(key, 0) + 1

    def remove_watcher(self, viewer: int | None) -> None:
        """Forget a watch stream."""
        key = SPECTATOR if viewer is None else viewer
        left = self._watchers.get(key, 0) - 1
        if left > 0:
            self._watchers[key] = left
        else:
            self._watchers.pop(key, None)

    def watch_message(self, version: int, viewer: int | None) -> bytes | None:
        """The prepared watch message of ``version`` for a viewer, or None (then replay it)."""
        key = SPECTATOR if viewer is None else viewer
        cached = self._watch_cache.get((version, key))
        if cached is not None:
            return cached
        if version != self.game.state.version:
            return None
        message = self._build_watch_message(version, viewer)
        self._watch_cache[(version, key)] = message
        return message

    def abandoned_message(self, viewer: int | None) -> bytes:
        """The last message of a watch stream on an abandoned game: the current version again."""
        tail = play_service_pb2.WatchGameResponse(status=game_pb2.GAME_STATUS_ABANDONED).SerializeToString()
        return embed(_WATCH_OBSERVATION, self.observation(viewer)) + tail

    def seats_message(self, viewer: int | None, joined_seat: int | None = None) -> bytes:
        """A watch message that tells who holds the seats (and which seat was just taken): the current
        observation again, without a decision."""
        game = self.game
        message = play_service_pb2.WatchGameResponse(status=STATUS[game.status])
        for seat in game.seats:
            message.seats.add(seat=seat.seat, joined=seat.joined, name=seat.name, resigned=seat.resigned)
        if joined_seat is not None:
            message.joined_seat = joined_seat
        return embed(_WATCH_OBSERVATION, self.observation(viewer)) + message.SerializeToString()

    def _build_watch_message(self, version: int, viewer: int | None) -> bytes:
        game = self.game
        message = play_service_pb2.WatchGameResponse(status=STATUS[game.status])
        if version > 0:
            record = game.history[version - 1]
            message.decision.CopyFrom(record_message(record))
            add_events(message.events, record.events or ())
        result = result_message(game)
        if result is not None:
            message.result.CopyFrom(result)
        return embed(_WATCH_OBSERVATION, self.observation(viewer)) + message.SerializeToString()

    def _prepare_watch_messages(self) -> None:
        if not self._watchers:
            if self._watch_cache:
                self._watch_cache.clear()
            return
        version = self.game.state.version
        for key in self._watchers:
            viewer = None if key == SPECTATOR else key
            self._watch_cache[(version, key)] = self._build_watch_message(version, viewer)
        oldest = version - WATCH_WINDOW
        for stale_key in [k for k in self._watch_cache if k[0] < oldest]:
            del self._watch_cache[stale_key]

    def replay_watch_messages(self, viewer: int | None, start: int, stop: int) -> list[bytes]:
        """Watch messages of versions ``start`` .. ``stop - 1``, rebuilt by replaying the log (run in a
        worker thread)."""
        game = self.game
        encoder = ObservationEncoder(game.game_id)
        resigned = game.resigned()
        waiting = game.status is GameStatus.WAITING
        messages = []
        for state, record, events in game.replay_versions(start, stop):
            if state.over:
                status = GameStatus.FINISHED
            else:
                status = GameStatus.WAITING if waiting else GameStatus.ACTIVE
            tail = play_service_pb2.WatchGameResponse(status=STATUS[status])
            if record is not None:
                tail.decision.CopyFrom(record_message(record))
                add_events(tail.events, events)
            if state.over:
                result = engine_result(state)
                if result is not None:
                    tail.result.CopyFrom(result_to_wire(result, resigned))
            observation = encode_observation(state, viewer, encoder)
            messages.append(embed(_WATCH_OBSERVATION, observation) + tail.SerializeToString())
        return messages


def feed(game: LiveGame) -> GameFeed:
    """The wire side of a loaded game, made (and made its game's listener) on first use."""
    listener = game.listener
    if isinstance(listener, GameFeed):
        return listener
    made = GameFeed(game)
    game.listener = made
    return made
