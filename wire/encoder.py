"""The served observation's bytes: a cached, part-by-part serialiser of observations, and its varints.

:class:`ObservationEncoder` writes the wire ``Observation`` of one game as independent serialised parts (a
serialised protobuf message is the concatenation of its fields, and concatenated messages merge), each
cached by the engine value it comes from, so that between two versions only what changed is written
again. It writes those parts with :mod:`kutnahora.wire.observations`' functions, so the bytes parse to
exactly what :func:`kutnahora.wire.observation_to_wire` builds from the same inputs.

What an observation holds for a viewer (the question, descriptions, costs, unavailable actions and open
squares) is decided once, in :func:`kutnahora.wire.seat_observation.encode_observation`; this module only
writes bytes. :func:`varint` and :func:`embed` also serve the server, which wraps cached observation bytes
in its own messages without copying them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from operator import is_, itemgetter
from typing import Generic, TypeVar

from kutnahora.engine import Cost, Observation, Option, option_text
from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.components import Commodity, ComponentSet, Square
from kutnahora.engine.costs import FREE
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.view import Observer, PendingView, PlayerView, WorkStep
from kutnahora.v1 import game_pb2
from kutnahora.wire.decisions import decision_payload, option_cost_to_wire
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
from kutnahora.wire.values import ACTION, DECISION_KIND

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
            _L.TEXT_FIELD_NUMBER, option_text(option)
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
