"""The server's settings: store, clocks, limits, ports and credentials, with their defaults.

:class:`ServerConfig` is plain data; :mod:`kutnahora.server.main` fills it from command-line flags and
``KUTNAHORA_*`` environment variables, and tests build it directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kutnahora.engine.components import ComponentSet

DEFAULT_DECISION_MS = 10_000
DEFAULT_BANK_MS = 120_000
DEFAULT_MAX_STRIKES = 3


@dataclass(frozen=True, slots=True)
class ClockConfig:
    """A game's clock: time per decision, a time bank per seat, and strikes before the random policy.

    When a seat's decision time and its bank are both spent, the server applies the default decision
    (Skip where listed, else the first "play for no effect" option, else the first listed option) and
    counts a strike; after ``max_strikes`` strikes the random policy plays the seat to the end.
    """

    decision_ms: int = DEFAULT_DECISION_MS
    bank_ms: int = DEFAULT_BANK_MS
    max_strikes: int = DEFAULT_MAX_STRIKES
    enabled: bool = True

    def to_json(self) -> dict[str, Any]:
        """The settings as a JSON object, for the store."""
        return {
            "decision_ms": self.decision_ms,
            "bank_ms": self.bank_ms,
            "max_strikes": self.max_strikes,
            "enabled": self.enabled,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClockConfig:
        """Settings read back from the store."""
        return cls(
            decision_ms=int(data.get("decision_ms", DEFAULT_DECISION_MS)),
            bank_ms=int(data.get("bank_ms", DEFAULT_BANK_MS)),
            max_strikes=int(data.get("max_strikes", DEFAULT_MAX_STRIKES)),
            enabled=bool(data.get("enabled", True)),
        )


@dataclass(frozen=True, slots=True)
class Limits:
    """What one server accepts; each refusal is a RESOURCE_EXHAUSTED with a sentence."""

    max_message_bytes: int = 1 << 20  # the largest request message
    max_games: int = 1000  # unfinished (waiting or active) games at once
    max_watchers: int = 1000  # WatchGame streams at once
    max_players: int = 4000  # Play streams at once
    rate_per_second: float = 2000.0  # sustained requests and stream messages per connection
    rate_burst: int = 4000  # the burst a connection may send above the sustained rate


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything :func:`kutnahora.server.app.create_server` needs; every field has a usable default."""

    db: str = ":memory:"  # a SQLite file path, or ":memory:" for a store that lives in memory only
    db_synchronous: str = "NORMAL"  # SQLite's synchronous pragma: NORMAL survives a crash, FULL a power cut
    clock: ClockConfig = field(default_factory=ClockConfig)
    limits: Limits = field(default_factory=Limits)
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None  # None: no metrics endpoint; 0: an ephemeral port
    admin_token: str = ""  # empty: no admin token (AbandonGame then needs the game's own token)
    tls_cert: str | None = None  # PEM files; both set serve TLS
    tls_key: str | None = None
    ended_games_in_memory: int = 256  # finished or abandoned games kept loaded; others reload from the store
    components: ComponentSet | None = None  # None: the engine's default component set
    policy_delay_seconds: float = 0.0  # pause before the random policy plays a replaced seat
    grace_seconds: float = 10.0  # how long calls in flight may run on at shutdown
    # A connection older than this is asked to go away (GOAWAY), so that clients reconnect and a scaled-out
    # deployment spreads them over its replicas again; 0 keeps connections for ever. Its calls in flight
    # then get the grace to finish before they are cancelled.
    max_connection_age_seconds: float = 0.0
    max_connection_age_grace_seconds: float = 300.0
    # A game waiting for players, or active without a clock, that sees no join, decision or resignation
    # for this long (while this server holds it) is abandoned; 0 keeps such games forever.
    idle_timeout_seconds: float = 3600.0
    # A Unix socket path to listen on as well as TCP (plain gRPC, clients dial unix:PATH); "" for none.
    unix_socket: str = ""
