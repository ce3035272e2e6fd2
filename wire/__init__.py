"""The one codec between the engine's values and the ``kutnahora.v1`` wire messages, both ways.

The server (to answer), the clients (the search bot reads its observation back into the engine's view) and
the learning environments (to hand the bots wire observations in process) all convert here; this package
imports only the engine and the generated wire code.

- :mod:`kutnahora.wire.values`: the enum tables (``GUILD`` and ``GUILD_BACK``...), squares, and
  :class:`Malformed`, raised for wire input that names nothing;
- :mod:`kutnahora.wire.decisions`: options as ``Decision`` payloads and back, option costs;
- :mod:`kutnahora.wire.games`: game options, events and results;
- :mod:`kutnahora.wire.observations`: observations, to the wire and back into the engine's;
- :mod:`kutnahora.wire.seat_observation`: **the observation a seat is sent** (question, descriptions,
  costs, unavailable actions, open squares), built by one function for the server and for every
  in-process user (:class:`~kutnahora.wire.seat_observation.SeatObserver`);
- :mod:`kutnahora.wire.encoder`: the cached, part-by-part serialiser that writes it;
- :mod:`kutnahora.wire.components`: the component set.

What is the server's own (statuses, seats, clocks, refusals, each game's outgoing messages) stays in
:mod:`kutnahora.server.messages` and :mod:`kutnahora.server.feed`.
"""

from kutnahora.wire.components import components_to_wire
from kutnahora.wire.decisions import (
    decision_payload,
    decision_to_option,
    option_cost_to_wire,
    option_to_decision,
)
from kutnahora.wire.games import (
    add_events,
    event_to_wire,
    game_options_from_wire,
    game_options_to_wire,
    result_to_wire,
)
from kutnahora.wire.observations import engine_observation, observation_to_wire
from kutnahora.wire.values import Malformed

__all__ = [
    "Malformed",
    "add_events",
    "components_to_wire",
    "decision_payload",
    "decision_to_option",
    "engine_observation",
    "event_to_wire",
    "game_options_from_wire",
    "game_options_to_wire",
    "observation_to_wire",
    "option_cost_to_wire",
    "option_to_decision",
    "result_to_wire",
]
