"""The server's settings: store, clocks, limits, addresses, logging and the process, with their defaults.

:class:`ServerConfig` is plain data, and the one declaration of every setting: each field an operator may
set names its flag, its ``KUTNAHORA_*`` environment variable and its help (see
:mod:`kutnahora.server.settings`), from which ``kutnahora-server``'s flags and the operations guide's
configuration table are made. Tests and embedding programs build it directly (:meth:`ServerConfig.in_memory`
for a server that keeps nothing and serves no metrics).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kutnahora.engine.components import ComponentSet
from kutnahora.plumbing import callers, keepalive, quota_store
from kutnahora.server import collector
from kutnahora.server.settings import setting

DEFAULT_DECISION_MS = 10_000
DEFAULT_BANK_MS = 120_000
DEFAULT_MAX_STRIKES = 3


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected on/off, true/false, yes/no or 1/0, not {text!r}")


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _optional_port(text: str) -> int | None:
    if text.strip().lower() in ("", "off", "none", "-1"):
        return None
    return int(text)


def _optional_text(text: str) -> str | None:
    return text or None


def _seconds_as_ms(text: str) -> int:
    return int(float(text) * 1000)


def _ms_as_seconds(ms: int) -> str:
    return f"{ms / 1000:g}"


def _port_or_off(port: int | None) -> str:
    return "off" if port is None else str(port)


def _thresholds(values: tuple[int, int, int]) -> str:
    return ",".join(map(str, values))


def _components_file(path: str) -> str:
    return path or "the packaged set"


@dataclass(frozen=True, slots=True)
class ClockConfig:
    """A game's clock: time per decision, a time bank per seat, and strikes before the random policy.

    When a seat's decision time and its bank are both spent, the server applies the default decision
    (Skip where listed, else the first "play for no effect" option, else the first listed option) and
    counts a strike; after ``max_strikes`` strikes the random policy plays the seat to the end.
    """

    decision_ms: int = setting(
        DEFAULT_DECISION_MS,
        "--decision-time",
        "DECISION_TIME",
        "default seconds per decision, for games that do not set their clock",
        parse=_seconds_as_ms,
        show=_ms_as_seconds,
        metavar="SECONDS",
    )
    bank_ms: int = setting(
        DEFAULT_BANK_MS,
        "--time-bank",
        "TIME_BANK",
        "default time bank per seat, in seconds",
        parse=_seconds_as_ms,
        show=_ms_as_seconds,
        metavar="SECONDS",
    )
    max_strikes: int = setting(
        DEFAULT_MAX_STRIKES,
        "--max-strikes",
        "MAX_STRIKES",
        "clock timeouts before the random policy plays a seat",
        parse=int,
        metavar="N",
    )
    enabled: bool = setting(
        True,
        "--clock",
        "CLOCK",
        "whether games have a clock unless they ask otherwise; --clock off (or KUTNAHORA_CLOCK=off) "
        "turns it off",
        parse=_bool,
        show=_on_off,
        metavar="on|off",
    )

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

    max_games: int = setting(
        1000,
        "--max-games",
        "MAX_GAMES",
        "most unfinished games this replica creates at once",
        parse=int,
        metavar="N",
    )
    max_watchers: int = setting(
        1000,
        "--max-watchers",
        "MAX_WATCHERS",
        "most WatchGame streams at once, per replica",
        parse=int,
        metavar="N",
    )
    max_players: int = setting(
        4000, "--max-players", "MAX_PLAYERS", "most Play streams at once, per replica", parse=int, metavar="N"
    )
    max_message_bytes: int = setting(
        1 << 20,
        "--max-message-bytes",
        "MAX_MESSAGE_BYTES",
        "largest request message",
        parse=int,
        metavar="BYTES",
    )
    rate_per_second: float = setting(
        2000.0,
        "--rate",
        "RATE",
        "requests and stream messages per second per connection (0: no limit)",
        parse=float,
        metavar="PER_SECOND",
    )
    rate_burst: int = setting(
        4000, "--burst", "BURST", "burst a connection may send above --rate", parse=int, metavar="N"
    )
    seat_rate: float = setting(
        50.0,
        "--seat-rate",
        "SEAT_RATE",
        "unary calls per second one seat may make on average: GetObservation and WatchGame naming it, "
        "GetGame with its token, SubmitDecision, ResignSeat; an accepted decision is not counted "
        "(0: no limit)",
        doc="counted for every caller, loopback too; per replica unless --quota-store is shared; see "
        "docs/operations.md#seats",
        parse=float,
        metavar="PER_SECOND",
    )
    seat_burst: int = setting(
        100,
        "--seat-burst",
        "SEAT_BURST",
        "calls one seat may make at once above --seat-rate",
        parse=int,
        metavar="N",
    )
    seat_stream_rate: float = setting(
        1.0,
        "--seat-stream-rate",
        "SEAT_STREAM_RATE",
        "Play streams per second one seat may open on average; each new one takes the seat over from the one "
        "before (0: no limit)",
        parse=float,
        metavar="PER_SECOND",
    )
    seat_stream_burst: int = setting(
        10,
        "--seat-stream-burst",
        "SEAT_STREAM_BURST",
        "Play streams one seat may open at once above --seat-stream-rate",
        parse=int,
        metavar="N",
    )
    overload_lag_ms: float = setting(
        250.0,
        "--overload-lag-ms",
        "OVERLOAD_LAG_MS",
        "event-loop lag, in milliseconds, past which new games and joins are refused OVERLOADED once most "
        "samples of the last --overload-for seconds are past it (0: never refused)",
        doc="games under way go on; see docs/operations.md#overload",
        parse=float,
        metavar="MS",
    )
    overload_cpu: float = setting(
        0.9,
        "--overload-cpu",
        "OVERLOAD_CPU",
        "share of one core the server's process may use, as a median over --overload-for seconds, past "
        "which new games and joins are refused OVERLOADED (0: never refused)",
        doc="a flood of cheap calls slows games without raising the loop's lag; see "
        "docs/operations.md#overload",
        parse=float,
        metavar="SHARE",
    )
    overload_decision_ms: float = setting(
        250.0,
        "--overload-decision-ms",
        "OVERLOAD_DECISION_MS",
        "median milliseconds decisions wait from their arrival to their answer over --overload-for "
        "seconds, past which new games and joins are refused OVERLOADED (0: never refused)",
        parse=float,
        metavar="MS",
    )
    overload_seconds: float = setting(
        10.0,
        "--overload-for",
        "OVERLOAD_FOR",
        "seconds of samples --overload-lag-ms, --overload-cpu and --overload-decision-ms look at (and the "
        "RetryInfo delay of their refusals)",
        parse=float,
        metavar="SECONDS",
    )


@dataclass(frozen=True, slots=True)
class Quotas:
    """What one caller (a peer address, or the unix socket's callers together) may hold and do; a
    refusal is RESOURCE_EXHAUSTED with a ``google.rpc.RetryInfo`` (:mod:`kutnahora.server.quotas`)."""

    caller_games: int = setting(
        20,
        "--caller-games",
        "CALLER_GAMES",
        "most unfinished games one caller may have created at once, per replica unless --quota-store is "
        "shared (0: no per-caller limit)",
        doc="a caller is an IPv4 address, an IPv6 /64, or the Unix socket's callers together",
        parse=int,
        metavar="N",
    )
    caller_rate: float = setting(
        2.0,
        "--caller-rate",
        "CALLER_RATE",
        "CreateGame and JoinGame calls per second one caller may make on average (0: no limit)",
        parse=float,
        metavar="PER_SECOND",
    )
    caller_burst: int = setting(
        20,
        "--caller-burst",
        "CALLER_BURST",
        "CreateGame and JoinGame calls one caller may make at once above --caller-rate",
        parse=int,
        metavar="N",
    )
    caller_reads: float = setting(
        50.0,
        "--caller-reads",
        "CALLER_READS",
        "reads (GetGame, GetObservation, ListGames, GetComponents, GetReplay, GetServerInfo) per second one "
        "caller may make on average (0: no limit)",
        doc="an exempt address's reads of a game count as the seat or game their token proves, else as the "
        "game's anonymous reads",
        parse=float,
        metavar="PER_SECOND",
    )
    caller_read_burst: int = setting(
        100,
        "--caller-read-burst",
        "CALLER_READ_BURST",
        "reads one caller may make at once above --caller-reads",
        parse=int,
        metavar="N",
    )
    caller_streams: int = setting(
        64,
        "--caller-streams",
        "CALLER_STREAMS",
        "most Play and WatchGame streams one caller may hold open at once, per replica unless --quota-store "
        "is shared (0: no limit)",
        doc="an exempt address's streams that prove a seat or a game token count as that seat's or game's",
        parse=int,
        metavar="N",
    )
    exempt: tuple[str, ...] = setting(
        callers.DEFAULT_EXEMPT,
        "--quota-exempt",
        "QUOTA_EXEMPT",
        "callers the per-caller quotas do not count, comma-separated: loopback, unix, addresses or "
        "networks (10.0.0.0/8); none for nobody",
        doc="calls carrying the admin token or the quota token are never counted",
        parse=callers.parse_exempt,
        show=callers.show_exempt,
        metavar="LIST",
    )
    trusted_proxies: tuple[callers.Network, ...] = setting(
        (),
        "--trusted-proxies",
        "TRUSTED_PROXIES",
        "reverse proxies, comma-separated addresses or networks, whose calls are counted as the caller's "
        "that their x-forwarded-for names (the right-most address there that is no trusted proxy); none: "
        "the header is ignored",
        doc="the proxy must replace the header a client sends (deploy/nginx/kutnahora-grpc.conf does)",
        parse=callers.parse_networks,
        show=callers.show_networks,
        metavar="LIST",
    )
    store: str = setting(
        quota_store.MEMORY,
        "--quota-store",
        "QUOTA_STORE",
        "where the per-caller and per-seat counts live: memory (each replica counts for itself, so a caller "
        "spread over N replicas gets N times its allowance, and a seat a Play stream and its rates on each) "
        "or a redis:// URL every replica shares",
        doc="while Redis cannot be reached each replica counts in its memory; see docs/operations.md#quotas",
        parse=quota_store.parse_url,
        show=quota_store.show_url,
        metavar="memory|URL",
    )
    store_prefix: str = setting(
        "kutnahora",
        "--quota-store-prefix",
        "QUOTA_STORE_PREFIX",
        "what the keys of --quota-store start with, so that several deployments may share one Redis",
        metavar="TEXT",
    )
    token: str = setting(
        "",
        "--quota-token",
        "QUOTA_TOKEN",
        "a token that exempts the calls carrying it from the per-caller quotas, and allows nothing else "
        "(for the arena or a tournament runner; none: only the admin token exempts)",
        doc="pass it as the variable (from a Secret), not a flag",
        metavar="TOKEN",
        secret=True,
    )


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything :func:`kutnahora.server.app.create_server` and ``kutnahora-server`` need; every field has
    a usable default, the same for the command and for a program that builds the configuration."""

    host: str = setting(
        "127.0.0.1",
        "--host",
        "HOST",
        "address the gRPC port listens on",
        doc="`0.0.0.0` (or `[::]`) for every interface, as in containers",
        metavar="ADDRESS",
    )
    port: int = setting(
        50051, "--port", "PORT", "gRPC port; 0 picks a free one (printed on start)", parse=int, metavar="PORT"
    )
    unix_socket: str = setting(
        "",
        "--unix-socket",
        "UNIX_SOCKET",
        "also listen on this Unix socket path, plain gRPC (clients dial unix:PATH); none: TCP only",
        doc="the tournament runner binds it into each hosted bot's sandbox",
        metavar="PATH",
    )
    metrics_host: str = setting(
        "127.0.0.1",
        "--metrics-host",
        "METRICS_HOST",
        "address of the /metrics endpoint",
        doc="`0.0.0.0` in containers",
        metavar="ADDRESS",
    )
    metrics_port: int | None = setting(
        9464,
        "--metrics-port",
        "METRICS_PORT",
        "port of the /metrics endpoint; off disables it, 0 picks a free one",
        parse=_optional_port,
        show=_port_or_off,
        metavar="PORT",
    )
    db: str = setting(
        "kutnahora.db",
        "--db",
        "DB",
        "the store: a SQLite file, a postgresql:// URL (replicas share it), or :memory: (keeps nothing)",
        metavar="FILE_OR_URL",
    )
    db_synchronous: str = setting(
        "NORMAL",
        "--db-synchronous",
        "DB_SYNCHRONOUS",
        "SQLite only: NORMAL survives a killed process, FULL also a power cut",
        metavar="NORMAL|FULL",
    )
    log_format: str = setting(
        "json",
        "--log-format",
        "LOG_FORMAT",
        "json lines (production) or console (development)",
        metavar="FORMAT",
    )
    log_level: str = setting(
        "info", "--log-level", "LOG_LEVEL", "debug, info, warning or error", metavar="LEVEL"
    )
    clock: ClockConfig = field(default_factory=ClockConfig)
    limits: Limits = field(default_factory=Limits)
    quotas: Quotas = field(default_factory=Quotas)
    admin_token: str = setting(
        "",
        "--admin-token",
        "ADMIN_TOKEN",
        "token that may abandon any game (none: AbandonGame needs the game's own token)",
        doc="pass it as the variable (from a Secret), not a flag",
        metavar="TOKEN",
        secret=True,
    )
    tls_cert: str | None = setting(
        None,
        "--tls-cert",
        "TLS_CERT",
        "PEM certificate chain; with --tls-key the gRPC port serves TLS",
        parse=_optional_text,
        metavar="FILE",
    )
    tls_key: str | None = setting(
        None, "--tls-key", "TLS_KEY", "PEM private key", parse=_optional_text, metavar="FILE"
    )
    grace_seconds: float = setting(
        10.0,
        "--grace",
        "GRACE",
        "seconds calls in flight may run on after SIGTERM",
        parse=float,
        metavar="SECONDS",
    )
    # A connection older than this is asked to go away (GOAWAY), so that clients reconnect and a scaled-out
    # deployment spreads them over its replicas again; 0 keeps connections for ever. Its calls in flight
    # then get the grace to finish before they are cancelled.
    max_connection_age_seconds: float = setting(
        0.0,
        "--max-connection-age",
        "MAX_CONNECTION_AGE",
        "seconds after which a client connection is asked to reconnect, so that replicas share clients "
        "again (0: never)",
        doc="HTTP/2 GOAWAY, `grpc.max_connection_age_ms` (see below)",
        parse=float,
        metavar="SECONDS",
    )
    max_connection_age_grace_seconds: float = setting(
        300.0,
        "--max-connection-age-grace",
        "MAX_CONNECTION_AGE_GRACE",
        "seconds the calls of a connection past its age may run on before they are cancelled",
        doc="`grpc.max_connection_age_grace_ms`",
        parse=float,
        metavar="SECONDS",
    )
    # The server's pings find clients that vanished without closing their connections
    # (kutnahora.plumbing.keepalive), whose streams would otherwise hold their places for ever.
    keepalive_seconds: float = setting(
        keepalive.DEFAULT_SECONDS,
        "--keepalive",
        "KEEPALIVE",
        "seconds between the server's pings on each connection; one that does not answer within "
        "--keepalive-timeout is closed, its streams cancelled and their places freed (0: no pings)",
        doc="`grpc.keepalive_time_ms` (see below)",
        parse=float,
        metavar="SECONDS",
    )
    keepalive_timeout_seconds: float = setting(
        keepalive.DEFAULT_TIMEOUT_SECONDS,
        "--keepalive-timeout",
        "KEEPALIVE_TIMEOUT",
        "seconds the server waits for a client to answer its ping",
        doc="`grpc.keepalive_timeout_ms`",
        parse=float,
        metavar="SECONDS",
    )
    handshake_timeout_seconds: float = setting(
        keepalive.DEFAULT_HANDSHAKE_SECONDS,
        "--handshake-timeout",
        "HANDSHAKE_TIMEOUT",
        "seconds a new connection has to complete its opening (TLS, HTTP/2's preface); one that has not is "
        "closed",
        doc="`grpc.server_handshake_timeout_ms`",
        parse=float,
        metavar="SECONDS",
    )
    max_connection_idle_seconds: float = setting(
        keepalive.DEFAULT_IDLE_SECONDS,
        "--max-connection-idle",
        "MAX_CONNECTION_IDLE",
        "seconds a connection may hold no call before it is closed (0: never); a client's channel "
        "reconnects for its next call",
        doc="`grpc.max_connection_idle_ms`",
        parse=float,
        metavar="SECONDS",
    )
    gc_thresholds: tuple[int, int, int] = setting(
        collector.DEFAULT_THRESHOLDS,
        "--gc-thresholds",
        "GC_THRESHOLDS",
        "Python's garbage-collector thresholds (700,10,10 are Python's own)",
        doc="see below",
        parse=collector.parse_thresholds,
        show=_thresholds,
        metavar="N[,N[,N]]",
    )
    gc_young_every_ms: float = setting(
        100.0,
        "--gc-young-every",
        "GC_YOUNG_EVERY",
        "milliseconds between collections of the youngest generation, after each of which what survived "
        "is frozen, so that no collection walks the games' long-lived objects (0: collections by the "
        "thresholds alone)",
        doc="see below",
        parse=float,
        metavar="MS",
    )
    gc_full_every_seconds: float = setting(
        3600.0,
        "--gc-full-every",
        "GC_FULL_EVERY",
        "seconds between full collections while --gc-young-every is on, which reclaim reference cycles "
        "that formed among frozen objects (0: never); each stops the server for under a millisecond per "
        "thousand objects held (about 0.8 s at a thousand games)",
        parse=float,
        metavar="SECONDS",
    )
    event_loop: str = setting(
        "auto",
        "--event-loop",
        "EVENT_LOOP",
        "the event loop: auto (uvloop where installed, else asyncio's), uvloop or asyncio",
        doc="uvloop is a dependency on CPython for Linux and macOS",
        metavar="LOOP",
    )
    ended_games_in_memory: int = setting(
        256,
        "--ended-games-in-memory",
        "ENDED_GAMES",
        "finished or abandoned games kept loaded (others reload from the store)",
        parse=int,
        metavar="N",
    )
    # A game active without a clock (or waiting, when waiting_timeout_seconds is 0) that sees no join,
    # decision or resignation for this long (while this server holds it) is abandoned; 0 keeps it forever.
    idle_timeout_seconds: float = setting(
        3600.0,
        "--idle-timeout",
        "IDLE_TIMEOUT",
        "abandon a game active without a clock (or waiting for players, when --waiting-timeout is 0) after "
        "this many seconds without a join, decision or resignation (0: never)",
        doc="see below",
        parse=float,
        metavar="SECONDS",
    )
    waiting_timeout_seconds: float = setting(
        600.0,
        "--waiting-timeout",
        "WAITING_TIMEOUT",
        "abandon a game still waiting for players this many seconds after it was created or last joined "
        "(0: --idle-timeout applies)",
        doc="frees the place and its creator's quota; see below",
        parse=float,
        metavar="SECONDS",
    )
    components_file: str = setting(
        "",
        "--components",
        "COMPONENTS",
        "component data file with your own printed values; every game records the set's content hash, "
        "and games of another set are refused",
        doc="every replica sharing a store must be started with the same file (the refusal is "
        "`FAILED_PRECONDITION`)",
        show=_components_file,
        metavar="FILE",
    )
    components: ComponentSet | None = None  # the set read from components_file; None: the engine's default
    policy_delay_seconds: float = 0.0  # pause before the random policy plays a replaced seat

    @classmethod
    def in_memory(cls, **changes: Any) -> ServerConfig:
        """A server that keeps nothing and serves no metrics endpoint (tests, benchmarks, embedding), with
        ``changes`` applied."""
        return replace(cls(db=":memory:", metrics_port=None), **changes)
