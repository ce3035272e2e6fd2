"""One game's outgoing messages and their byte caches.

:class:`GameFeed` keeps, per game, the serialised observation of the current version for each viewer
(written by :func:`kutnahora.wire.seat_observation.encode_observation` with the game's
:class:`~kutnahora.wire.ObservationEncoder`), the prepared watch messages and the answers to recent
decisions (returned again to an exact retry). Messages that embed cached bytes are assembled from the
serialised parts with the generated ``*_FIELD_NUMBER`` constants (a serialised message is the concatenation
of its fields), so an observation is serialised once per version and viewer, however many streams carry it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kutnahora.engine import result as engine_result
from kutnahora.server.history import DETAIL_WINDOW
from kutnahora.server.messages import STATUS, clock_message, record_message, result_message
from kutnahora.server.records import (
    AppliedDecision,
    GameStatus,
)
from kutnahora.v1 import game_pb2, play_service_pb2
from kutnahora.wire import (
    add_events,
    result_to_wire,
)
from kutnahora.wire.encoder import ObservationEncoder, embed, shared_option_entries
from kutnahora.wire.seat_observation import encode_observation

if TYPE_CHECKING:
    from kutnahora.server.game import LiveGame


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
