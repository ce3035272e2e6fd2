"""``kutnahora-server``: run the game server from the command line.

Every flag can also be set by an environment variable (shown in ``--help``); a flag wins over its
variable. The server prints the address it listens on (and the metrics URL) on standard output once it
serves, logs JSON lines on standard error, and stops gracefully on SIGTERM or SIGINT.

Examples::

    kutnahora-server                                   # 127.0.0.1:50051, SQLite file kutnahora.db
    kutnahora-server --port 0 --db :memory: --log-format console
    KUTNAHORA_HOST=0.0.0.0 KUTNAHORA_DB=/data/kutnahora.db kutnahora-server
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import kutnahora
from kutnahora.engine import RULES_VERSION, ComponentError, load_components
from kutnahora.server import collector, event_loop, logs
from kutnahora.server.app import StartupError, create_server
from kutnahora.server.config import ClockConfig, Limits, ServerConfig
from kutnahora.server.store_postgres import is_postgres_url, redact_url

T = TypeVar("T")
ENV_PREFIX = "KUTNAHORA_"


def _env(name: str, default: T, parse: Callable[[str], T]) -> T:
    value = os.environ.get(ENV_PREFIX + name)
    if value is None or value == "":
        return default
    try:
        return parse(value)
    except ValueError:
        raise SystemExit(f"environment variable {ENV_PREFIX}{name}={value!r} is not valid") from None


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


def _optional_port(text: str) -> int | None:
    if text.strip().lower() in ("", "off", "none", "-1"):
        return None
    return int(text)


def version_text() -> str:
    """What ``--version`` prints: the package version, the rules version and how this installation was
    built (pure Python, or with modules compiled by mypyc, see setup.py)."""
    compiled = kutnahora.compiled_modules()
    build = f"compiled: {len(compiled)} of {len(kutnahora.COMPILABLE)} modules" if compiled else "pure Python"
    return f"kutnahora-server {kutnahora.__version__} (rules version {RULES_VERSION}, {build})"


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser, with defaults taken from the environment."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-server",
        description="Serve Kutná Hora games over gRPC.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )

    def add(flag: str, env: str, default: Any, parse: Callable[[str], Any], help_text: str) -> None:
        parser.add_argument(
            flag,
            type=parse,
            default=_env(env, default, parse),
            help=f"{help_text} [env {ENV_PREFIX}{env}]",
            metavar=env,
        )

    parser.add_argument("--version", action="version", version=version_text())
    defaults = ServerConfig()
    clock = ClockConfig()
    limits = Limits()
    add("--host", "HOST", "127.0.0.1", str, "address to listen on (0.0.0.0 or [::] for every interface)")
    add("--port", "PORT", 50051, int, "gRPC port (0 picks a free one)")
    add(
        "--unix-socket",
        "UNIX_SOCKET",
        "",
        str,
        "also listen on this Unix socket path, plain (clients: unix:PATH)",
    )
    add("--metrics-host", "METRICS_HOST", defaults.metrics_host, str, "address of the /metrics endpoint")
    add(
        "--metrics-port",
        "METRICS_PORT",
        9464,
        _optional_port,
        "port of the /metrics endpoint ('off' disables it)",
    )
    add("--db", "DB", "kutnahora.db", str, "SQLite file, postgresql:// URL (replicas share it), or :memory:")
    add(
        "--db-synchronous",
        "DB_SYNCHRONOUS",
        defaults.db_synchronous,
        str,
        "SQLite synchronous: NORMAL or FULL",
    )
    add("--log-format", "LOG_FORMAT", "json", str, "log lines as json or console")
    add("--log-level", "LOG_LEVEL", "info", str, "debug, info, warning or error")
    add("--decision-time", "DECISION_TIME", clock.decision_ms / 1000, float, "default seconds per decision")
    add("--time-bank", "TIME_BANK", clock.bank_ms / 1000, float, "default time bank per seat, in seconds")
    add(
        "--max-strikes",
        "MAX_STRIKES",
        clock.max_strikes,
        int,
        "timeouts before the random policy plays a seat",
    )
    add("--clock", "CLOCK", True, _bool, "whether games have a clock unless they ask otherwise")
    add("--max-games", "MAX_GAMES", limits.max_games, int, "most unfinished games at once")
    add("--max-watchers", "MAX_WATCHERS", limits.max_watchers, int, "most WatchGame streams at once")
    add("--max-players", "MAX_PLAYERS", limits.max_players, int, "most Play streams at once")
    add("--max-message-bytes", "MAX_MESSAGE_BYTES", limits.max_message_bytes, int, "largest request message")
    add("--rate", "RATE", limits.rate_per_second, float, "requests per second per connection (0: no limit)")
    add("--burst", "BURST", limits.rate_burst, int, "burst of requests per connection")
    add("--admin-token", "ADMIN_TOKEN", "", str, "token that may abandon any game (prefer the variable)")
    add("--tls-cert", "TLS_CERT", "", str, "PEM certificate chain; with --tls-key, serve TLS")
    add("--tls-key", "TLS_KEY", "", str, "PEM private key")
    add("--grace", "GRACE", defaults.grace_seconds, float, "seconds calls in flight may run on at shutdown")
    add(
        "--max-connection-age",
        "MAX_CONNECTION_AGE",
        defaults.max_connection_age_seconds,
        float,
        "seconds after which a client connection is asked to reconnect, so that replicas share clients "
        "again (0: never)",
    )
    add(
        "--max-connection-age-grace",
        "MAX_CONNECTION_AGE_GRACE",
        defaults.max_connection_age_grace_seconds,
        float,
        "seconds the calls of a connection past its age may run on before they are cancelled",
    )
    add(
        "--idle-timeout",
        "IDLE_TIMEOUT",
        defaults.idle_timeout_seconds,
        float,
        "abandon a game waiting for players, or active without a clock, after this many seconds without "
        "a join, decision or resignation (0: never)",
    )
    add(
        "--gc-thresholds",
        "GC_THRESHOLDS",
        ",".join(map(str, collector.DEFAULT_THRESHOLDS)),
        str,
        "Python garbage-collector thresholds (700,10,10 are Python's own)",
    )
    add(
        "--event-loop",
        "EVENT_LOOP",
        "auto",
        str,
        "event loop: auto (uvloop where installed, else asyncio's), uvloop or asyncio",
    )
    add(
        "--components",
        "COMPONENTS",
        "",
        str,
        "component data file with your own printed values (default: the packaged reconstructed set); "
        "every game records the set's content hash, and games of another set are refused",
    )
    add(
        "--ended-games-in-memory",
        "ENDED_GAMES",
        defaults.ended_games_in_memory,
        int,
        "ended games kept loaded",
    )
    return parser


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """The server configuration the parsed arguments describe."""
    if args.log_format not in ("json", "console"):
        raise SystemExit(f"--log-format must be json or console, not {args.log_format!r}")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise SystemExit("--tls-cert and --tls-key must be given together")
    if args.max_connection_age < 0 or args.max_connection_age_grace < 0:
        raise SystemExit("--max-connection-age and --max-connection-age-grace must not be negative")
    if args.idle_timeout < 0:
        raise SystemExit(f"--idle-timeout must be 0 (never) or more seconds, not {args.idle_timeout:g}")
    components = None
    if args.components:
        try:
            components = load_components(args.components)
        except (OSError, ComponentError) as error:
            raise SystemExit(f"kutnahora-server: --components {args.components}: {error}") from None
    return ServerConfig(
        components=components,
        db=args.db,
        db_synchronous=args.db_synchronous,
        clock=ClockConfig(
            decision_ms=int(args.decision_time * 1000),
            bank_ms=int(args.time_bank * 1000),
            max_strikes=args.max_strikes,
            enabled=args.clock,
        ),
        limits=Limits(
            max_message_bytes=args.max_message_bytes,
            max_games=args.max_games,
            max_watchers=args.max_watchers,
            max_players=args.max_players,
            rate_per_second=args.rate,
            rate_burst=args.burst,
        ),
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        admin_token=args.admin_token,
        tls_cert=args.tls_cert or None,
        tls_key=args.tls_key or None,
        ended_games_in_memory=args.ended_games_in_memory,
        grace_seconds=args.grace,
        max_connection_age_seconds=args.max_connection_age,
        max_connection_age_grace_seconds=args.max_connection_age_grace,
        idle_timeout_seconds=args.idle_timeout,
        unix_socket=args.unix_socket,
    )


async def serve(host: str, port: int, config: ServerConfig) -> None:
    """Run a server until SIGTERM or SIGINT, then stop it gracefully."""
    log = logs.get_logger()
    address = f"{host}:{port}"
    try:
        server, bound = await create_server(address, config)
    except (OSError, RuntimeError) as error:
        raise SystemExit(f"kutnahora-server: cannot listen on {address}: {error}") from None
    try:
        await server.start()
    except StartupError as error:
        await server.stop(0)
        raise SystemExit(f"kutnahora-server: {error}") from None
    collector.freeze_loaded()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    scheme = "grpcs" if config.tls_cert else "grpc"
    where = f"{scheme}://{host}:{bound}" + (f" and unix:{config.unix_socket}" if config.unix_socket else "")
    metrics = f"http://{config.metrics_host}:{server.metrics_port}/metrics" if server.metrics_port else "off"
    if config.db in ("", ":memory:"):
        store = "memory"
    elif is_postgres_url(config.db):
        store = f"postgresql {redact_url(config.db)}"
    else:
        store = f"sqlite {config.db}"
    print(f"kutnahora-server listening on {where} (metrics {metrics}, store {store})", flush=True)
    log.info(
        "server listening",
        address=f"{host}:{bound}",
        metrics=metrics,
        store=store,
        compiled_modules=len(kutnahora.compiled_modules()),
        event_loop=event_loop.running_loop_name(),
    )
    await stop.wait()
    log.info("stopping", grace_seconds=config.grace_seconds)
    await server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-server``."""
    args = build_parser().parse_args(argv)
    config = config_from_args(args)
    try:
        logs.configure(args.log_format, args.log_level)
        collector.configure(collector.parse_thresholds(args.gc_thresholds))
        event_loop.resolve(args.event_loop)
    except ValueError as error:
        raise SystemExit(f"kutnahora-server: {error}") from None
    try:
        event_loop.run(serve(args.host, args.port, config), args.event_loop)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
