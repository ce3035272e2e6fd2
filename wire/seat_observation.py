"""The observation a seat is sent: one function, used by the server and by every in-process user.

:func:`encode_observation` decides what the wire observation of a game holds for one viewer: the engine's
redacted view (:class:`kutnahora.engine.Observer`), the question of the pending decision, the open mine
squares and plots with their costs, and, for the seat that owes the decision, each legal option's
description and cost and the card halves not offered with effect. The server's Play, GetObservation and
Watch answers embed its bytes (:class:`kutnahora.server.feed.GameFeed`); an in-process user (an
environment's opponent, the ladder, training, a benchmark) reads the same bytes through
:class:`SeatObserver`, so a bot played in process sees exactly what it sees over gRPC. A test plays games
both ways and compares the observations byte for byte.
"""

from __future__ import annotations

from functools import partial

from kutnahora.engine import GameState, Option
from kutnahora.engine.costs import PRICED_KINDS, mine_squares, option_costs, plot_squares
from kutnahora.engine.text import QUESTIONS, describe_option, unavailable_actions
from kutnahora.v1 import game_pb2
from kutnahora.wire.encoder import ObservationEncoder, shared_option_entries


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


class SeatObserver:
    """The served observations of one game, for a bot played in process.

    It keeps one :class:`~kutnahora.wire.ObservationEncoder` for the game, as the server does, so
    asking for every decision's observation costs what it costs the server. A new game needs a new
    observer (:meth:`reset`): a guild-set option's description names the game's guild sets.
    """

    __slots__ = ("_encoder", "game_id")

    def __init__(self, game_id: str = "local") -> None:
        self.game_id = game_id
        self._encoder: ObservationEncoder | None = None

    def reset(self) -> None:
        """Forget the game: the next observation starts a new encoder."""
        self._encoder = None

    def encoded(self, state: GameState, viewer: int | None) -> bytes:
        """The serialised observation the server would send ``viewer`` (None: a spectator) of ``state``."""
        encoder = self._encoder
        if encoder is None:
            encoder = self._encoder = ObservationEncoder(
                self.game_id, options=shared_option_entries(state.components)
            )
        return encode_observation(state, viewer, encoder)

    def observe(self, state: GameState, viewer: int | None) -> game_pb2.Observation:
        """The observation the server would send ``viewer`` of ``state``, as a message."""
        return game_pb2.Observation.FromString(self.encoded(state, viewer))


def served_observation(state: GameState, viewer: int | None, game_id: str = "local") -> game_pb2.Observation:
    """The observation the server would send ``viewer`` of ``state`` (a one-off; a game played position
    after position is cheaper through one :class:`SeatObserver`)."""
    return SeatObserver(game_id).observe(state, viewer)
