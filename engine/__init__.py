"""The rules of Kutná Hora: The City of Silver for two, three and four players.

Pure Python and deterministic from a seed: no I/O beyond its own component data, no network, no clock.
The public API is re-exported here; see :mod:`kutnahora.engine.game`.
"""

from kutnahora.engine.component_file import ComponentError, default_components, load_components
from kutnahora.engine.costs import Cost, option_cost, option_costs
from kutnahora.engine.events import Event
from kutnahora.engine.game import (
    GameOver,
    GameResult,
    IllegalDecision,
    NotAnOption,
    NotYourTurn,
    apply,
    check,
    components_hash,
    legal,
    new_game,
    owed,
    pending,
    replay,
    result,
    state_hash,
)
from kutnahora.engine.options import DecisionKind, Option, PendingDecision, option_text, parse_option
from kutnahora.engine.posing import pending_options
from kutnahora.engine.resample import resample
from kutnahora.engine.setup import SetupError
from kutnahora.engine.state import GameOptions, GameState, clone
from kutnahora.engine.view import Observation, Observer, WorkStep, observe

RULES_VERSION = 2
"""Changes only when the engine's behaviour changes: a replay is valid for one rules version."""

__all__ = [
    "RULES_VERSION",
    "ComponentError",
    "Cost",
    "DecisionKind",
    "Event",
    "GameOptions",
    "GameOver",
    "GameResult",
    "GameState",
    "IllegalDecision",
    "NotAnOption",
    "NotYourTurn",
    "Observation",
    "Observer",
    "Option",
    "PendingDecision",
    "SetupError",
    "WorkStep",
    "apply",
    "check",
    "clone",
    "components_hash",
    "default_components",
    "legal",
    "load_components",
    "new_game",
    "observe",
    "option_cost",
    "option_costs",
    "option_text",
    "owed",
    "parse_option",
    "pending",
    "pending_options",
    "replay",
    "resample",
    "result",
    "state_hash",
]
