"""``kutnahora-server``: run the game server from the command line.

Every flag can also be set by an environment variable (shown in ``--help``, with its default); a flag
wins over its variable. Flags, variables and defaults are declared once, on the fields of
:class:`kutnahora.server.config.ServerConfig`. The server prints the address it listens on (and the
metrics URL) on standard output once it serves, logs JSON lines on standard error, and stops gracefully
on SIGTERM or SIGINT.

Examples::

    kutnahora-server                                   # 127.0.0.1:50051, SQLite file kutnahora.db
    kutnahora-server --port 0 --db :memory: --log-format console
    KUTNAHORA_HOST=0.0.0.0 KUTNAHORA_DB=/data/kutnahora.db kutnahora-server
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Any

import kutnahora
from kutnahora.engine import RULES_VERSION, ComponentError, load_components
from kutnahora.native import ENGINE_VARIABLE, EngineUnavailable, active_engine, native_available
from kutnahora.plumbing import logs
from kutnahora.plumbing.errors import StartupError
from kutnahora.plumbing.tls import pair_problem
from kutnahora.server import collector, event_loop, settings
from kutnahora.server.app import create_server
from kutnahora.server.config import ServerConfig
from kutnahora.server.service import SERVER_ENGINE
from kutnahora.server.store import is_postgres_url, redact_url


def version_text() -> str:
    """What ``--version`` prints: the package version, the rules version, how this installation was built
    (pure Python, or with modules compiled by mypyc, see setup.py), the engine its games are played by and
    whether the native rules core is built and selected (see kutnahora.native)."""
    compiled = kutnahora.compiled_modules()
    build = f"compiled: {len(compiled)} of {len(kutnahora.COMPILABLE)} modules" if compiled else "pure Python"
    return (
        f"kutnahora-server {kutnahora.__version__} (rules version {RULES_VERSION}, {build}; "
        f"games played by the {SERVER_ENGINE} engine, {core_text()})"
    )


def core_text() -> str:
    """Whether the native rules core is built and, when it is, the engine ``KUTNAHORA_ENGINE`` selects for
    what plays on the core (search, simulation, the environments)."""
    if not native_available():
        return "native core not built"
    try:
        selected = active_engine()
    except EngineUnavailable:
        selected = f"nothing ({ENGINE_VARIABLE} names no engine)"
    return f"native core built, {ENGINE_VARIABLE} selects {selected}"


class _PrintVersion(argparse.Action):
    """``--version``: :func:`version_text` on one line, as it is (argparse's own version action would fill
    it to the terminal's width)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser: a flag for every setting of :class:`ServerConfig`, defaults taken from
    the environment."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-server",
        description="Serve Kutná Hora games over gRPC. Every flag can also be set by its environment "
        "variable; a flag wins over its variable.",
    )
    parser.add_argument("--version", action=_PrintVersion, help="print the version line and exit")
    settings.add_arguments(parser, ServerConfig)
    return parser


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """The server configuration the parsed arguments describe."""
    if args.log_format not in ("json", "console"):
        raise SystemExit(f"--log-format must be json or console, not {args.log_format!r}")
    if tls_problem := pair_problem(args.tls_cert, args.tls_key):
        raise SystemExit(tls_problem)
    if args.max_connection_age < 0 or args.max_connection_age_grace < 0:
        raise SystemExit("--max-connection-age and --max-connection-age-grace must not be negative")
    if args.handshake_timeout <= 0:
        raise SystemExit(f"--handshake-timeout must be more than 0, not {args.handshake_timeout:g}")
    if args.max_connection_idle < 0:
        raise SystemExit(
            f"--max-connection-idle must be 0 (never) or more seconds, not {args.max_connection_idle:g}"
        )
    if args.keepalive < 0 or args.keepalive_timeout <= 0:
        raise SystemExit(
            f"--keepalive must be 0 (no pings) or more seconds and --keepalive-timeout more than 0, not "
            f"{args.keepalive:g} and {args.keepalive_timeout:g}"
        )
    if args.gc_young_every < 0 or args.gc_full_every < 0:
        raise SystemExit(
            "--gc-young-every and --gc-full-every must be 0 (off) or more, not "
            f"{args.gc_young_every:g} and {args.gc_full_every:g}"
        )
    if args.idle_timeout < 0:
        raise SystemExit(f"--idle-timeout must be 0 (never) or more seconds, not {args.idle_timeout:g}")
    components = None
    if args.components:
        try:
            components = load_components(args.components)
        except (OSError, ComponentError) as error:
            raise SystemExit(f"kutnahora-server: --components {args.components}: {error}") from None
    config: ServerConfig = settings.values_from_args(ServerConfig, args, components=components)
    return config


def port_in_use(host: str, port: int) -> bool:
    """Whether another process already listens on ``host:port`` (asked before gRPC is, whose C core would
    log a raw line of its own on standard error first). Port 0 is never in use."""
    if port == 0:
        return False
    try:
        addresses = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror:
        return False  # gRPC says what is wrong with the address
    for family, kind, protocol, _, address in addresses:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC binds: TIME_WAIT is no use
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    return True
    return False


async def serve(config: ServerConfig) -> None:
    """Run a server until SIGTERM or SIGINT, then stop it gracefully."""
    log = logs.get_logger("kutnahora.server")
    host, port = config.host, config.port
    address = f"{host}:{port}"
    if port_in_use(host, port):
        raise SystemExit(
            f"kutnahora-server: cannot listen on {address}: the port is already in use (another server may "
            "be running; choose another with --port, or 0 for a free one)"
        )
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
    young = None
    if config.gc_young_every_ms:
        young = collector.YoungCollector(config.gc_young_every_ms / 1000, config.gc_full_every_seconds)
        young.start()
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
    if young is not None:
        young.stop()
    await server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-server``."""
    args = build_parser().parse_args(argv)
    config = config_from_args(args)
    try:
        logs.configure(config.log_format, config.log_level)
        collector.configure(config.gc_thresholds)
        event_loop.resolve(config.event_loop)
    except ValueError as error:
        raise SystemExit(f"kutnahora-server: {error}") from None
    try:
        event_loop.run(serve(config), config.event_loop)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
