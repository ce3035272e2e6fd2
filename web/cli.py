"""``kutnahora-web``: serve the game in a browser, as a client of a Kutná Hora game server.

    kutnahora-web --server localhost:50051 --port 8080
    kutnahora-web --server localhost:50051 --results results.json     # with a tournament's standings

It prints the address it serves once it is ready, and where its metrics are (``--metrics-port``: off by
default, and never on the port the visitors reach). It logs as the game server does (JSON lines on
standard error, ``--log-format console`` for readable ones), a visitor's refusals among them, a few.

It may start before its game server: it serves its pages at once, saying "game server unavailable" until
it reaches the server, retrying with a growing wait, and reconnects by itself when the game server stops
or restarts. Requests must name it by an allowed host name
(``--allowed-hosts``; by default the address it serves), so that a DNS-rebinding page cannot use it.

Each visitor (a client address, an IPv6 /64; behind ``--trusted-proxies`` the address they forward) is
held to its own limits, ``--visitor-*``, each also set by its ``KUTNAHORA_WEB_VISITOR_*`` variable
(:mod:`kutnahora.web.limits`): the game server sees every visitor as this one caller. The counts are
each replica's own unless ``--quota-store redis://…`` names a Redis every web replica shares.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from kutnahora.clients.help_format import DefaultsHelpFormatter
from kutnahora.clients.sdk import ClientError
from kutnahora.plumbing import logs
from kutnahora.plumbing.callers import Network
from kutnahora.plumbing.quota_store import MEMORY, parse_url, show_url
from kutnahora.web.app import create_app
from kutnahora.web.connections import HEAD_SECONDS, ConnectionGuard, guarded
from kutnahora.web.hosts import default_hosts
from kutnahora.web.limits import Limits
from kutnahora.web.metrics import MetricsEndpoint, WebMetrics
from kutnahora.web.standings import ResultsError
from kutnahora.web.visitors import parse_networks

DEFAULTS = Limits()


def whole(text: str) -> int:
    """A count: a whole number, 0 or more."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 0 or more")
    return int(text)


def rate(text: str) -> float:
    """A rate: a number, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of 0 or more")
    return value


def positive(text: str) -> float:
    """A length of time: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def port_or_off(text: str) -> int | None:
    """A port from 0 (a free one) to 65535, or ``off`` (None)."""
    if text.strip().lower() in ("", "off", "none"):
        return None
    if not text.strip().isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port from 0 to 65535, or off")
    return int(text)


def store_url(text: str) -> str:
    """``--quota-store``: memory, or a Redis URL."""
    try:
        return parse_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def networks(text: str) -> tuple[Network, ...]:
    try:
        return parse_networks(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@dataclass(frozen=True, slots=True)
class VisitorOption:
    """One ``--visitor-*`` option: the :class:`Limits` field it sets, how its text is read, its help."""

    field: str
    parse: Callable[[str], float]
    help: str

    @property
    def flag(self) -> str:
        """``--visitor-creation-burst`` for the field ``creation_burst``."""
        return "--visitor-" + self.field.replace("_", "-")

    @property
    def variable(self) -> str:
        """The variable's name after ``KUTNAHORA_WEB_``: ``VISITOR_CREATION_BURST``."""
        return "VISITOR_" + self.field.upper()


VISITOR_OPTIONS = (
    VisitorOption("creations", rate, "game creations and joins a visitor may make a minute, on average"),
    VisitorOption("creation_burst", whole, "... and at once"),
    VisitorOption(
        "games",
        whole,
        "unfinished games a visitor may have created here; a game frees its place when it ends",
    ),
    VisitorOption("requests", rate, "requests a visitor may send a second, on average, static files aside"),
    VisitorOption("request_burst", whole, "... and at once"),
    VisitorOption("streams", whole, "live games (event streams) a visitor may follow at once"),
    VisitorOption(
        "connections",
        whole,
        "connections a visitor may hold open at once (trusted proxies' are not counted); one past it is "
        "answered 429 and closed",
    ),
)
"""The ``--visitor-*`` options, one per :class:`Limits` field, each with its ``KUTNAHORA_WEB_VISITOR_*``
variable (its default; else the field's default)."""


def setting(name: str, default: object) -> str:
    """A setting's default: its environment variable ``KUTNAHORA_WEB_<NAME>``, else ``default``."""
    return os.environ.get(f"KUTNAHORA_WEB_{name}", str(default))


def add_setting(
    group: argparse._ActionsContainer, flag: str, name: str, default: object, help: str, **options: Any
) -> None:
    """An option whose default is its variable ``KUTNAHORA_WEB_<NAME>`` (else ``default``), which its help
    names."""
    group.add_argument(flag, default=setting(name, default), help=f"{help} (KUTNAHORA_WEB_{name})", **options)


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-web",
        formatter_class=DefaultsHelpFormatter,
        description=(
            "Serve Kutná Hora in a browser: a lobby, live games and replays drawn as a board, "
            "playing a seat, and tournament standings. It talks to a game server over the public "
            "gRPC protocol."
        ),
    )
    parser.add_argument("--server", default="localhost:50051", help="game server address host:port")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port to serve on; 0 picks a free one")
    parser.add_argument(
        "--results", type=Path, help="a tournament's results file (kutnahora-tournament --out) to show"
    )
    parser.add_argument("--tls", action="store_true", help="talk to the game server over TLS")
    parser.add_argument("--ca-cert", help="PEM file of the CA to trust (TLS)")
    parser.add_argument(
        "--server-token",
        default=setting("SERVER_TOKEN", ""),
        metavar="TOKEN",
        help="the game server's --quota-token, sent with the games and joins made here, so that the "
        "visitors' games do not count as one caller's in its per-caller quotas (this server limits each "
        "visitor itself); prefer the variable KUTNAHORA_WEB_SERVER_TOKEN",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log level (default info)",
    )
    add_setting(
        parser,
        "--log-format",
        "LOG_FORMAT",
        "json",
        "log lines as JSON or as readable console lines, on standard error, as kutnahora-server's",
        choices=["json", "console"],
    )
    parser.add_argument("--no-access-log", action="store_true", help="do not log each request")
    add_setting(
        parser,
        "--metrics-port",
        "METRICS_PORT",
        "off",
        "serve the Prometheus /metrics on this port of --metrics-host, never on --port; 0 picks a free "
        "one, off serves none",
        type=port_or_off,
        metavar="PORT",
    )
    add_setting(
        parser,
        "--metrics-host",
        "METRICS_HOST",
        "127.0.0.1",
        "address of the /metrics port; keep it off the visitors' network",
        metavar="ADDRESS",
    )
    parser.add_argument(
        "--allowed-hosts",
        metavar="NAMES",
        help=(
            "comma-separated host names the Host header may give ('*' for any); default: the --host address, "
            "with localhost, 127.0.0.1 and ::1 when it is a loopback address"
        ),
    )
    limits = parser.add_argument_group(
        "limits per visitor",
        "What one visitor (a client address; an IPv6 /64) may do; past a limit it gets HTTP 429 with "
        "Retry-After and a sentence, and the game server is asked nothing. 0 turns a limit off. Each "
        "option's default comes from the variable it names.",
    )
    for option in VISITOR_OPTIONS:
        default = getattr(DEFAULTS, option.field)
        add_setting(
            limits, option.flag, option.variable, default, option.help, type=option.parse, metavar="N"
        )
    add_setting(
        limits,
        "--head-timeout",
        "HEAD_TIMEOUT",
        HEAD_SECONDS,
        "seconds a connection has to send a request's whole head (its line and headers), from its opening "
        "or a next request's first byte; one that is late is closed",
        type=positive,
        metavar="SECONDS",
    )
    add_setting(
        limits,
        "--trusted-proxies",
        "TRUSTED_PROXIES",
        "none",
        "comma-separated addresses or networks of reverse proxies in front of this server: a request from "
        "one is the visitor's that X-Forwarded-For names (the right-most address there that is no trusted "
        "proxy); default none, and the header is ignored",
        type=networks,
        metavar="NETWORKS",
    )
    add_setting(
        limits,
        "--quota-store",
        "QUOTA_STORE",
        MEMORY,
        "where the per-visitor counts live: memory (each replica counts for itself, so a visitor spread "
        "over N replicas gets N times its allowance) or a redis:// URL every web replica shares (while it "
        f"cannot be reached, each replica counts in its memory); default "
        f"{show_url(setting('QUOTA_STORE', MEMORY))}, its password never shown",
        type=store_url,
        metavar="URL",
    )
    add_setting(
        limits,
        "--quota-store-prefix",
        "QUOTA_STORE_PREFIX",
        "kutnahora",
        "what the keys of --quota-store start with (then :web), so that several deployments may share one "
        "Redis",
        metavar="PREFIX",
    )
    return parser


def visitor_limits(args: argparse.Namespace) -> Limits:
    """The per-visitor limits the options give."""
    return Limits(**{option.field: getattr(args, f"visitor_{option.field}") for option in VISITOR_OPTIONS})


def allowed_hosts(args: argparse.Namespace) -> list[str]:
    """The host names requests may give: ``--allowed-hosts``, else those of the served address."""
    if args.allowed_hosts:
        return [name.strip() for name in args.allowed_hosts.split(",") if name.strip()]
    return default_hosts(args.host)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; ``OSError`` says why it could not be opened."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


async def serve(
    args: argparse.Namespace, sock: socket.socket, metrics: WebMetrics, endpoint: MetricsEndpoint | None
) -> int:
    app = create_app(
        args.server,
        tls=args.tls,
        ca_cert=args.ca_cert,
        quota_token=args.server_token or None,
        results=args.results,
        allowed_hosts=allowed_hosts(args),
        limits=visitor_limits(args),
        trusted_proxies=args.trusted_proxies,
        metrics=metrics,
        quota_store=args.quota_store,
        quota_store_prefix=args.quota_store_prefix,
    )
    limits = app.state.limits
    guard = ConnectionGuard(limits.limits.connections, limits.visitors, limits.refusals, args.head_timeout)
    config = uvicorn.Config(
        app,
        http=guarded(guard),  # uvicorn's h11 protocol, each address's connections bounded, heads timed
        ws="none",  # no WebSocket here (events are server-sent): an upgrade is a plain request, kept counted
        log_config=None,  # uvicorn's lines go through the process's log configuration, as the app's do
        log_level=args.log_level,
        access_log=not args.no_access_log,
        # X-Forwarded-For and -Proto are believed from --trusted-proxies only (uvicorn would believe
        # 127.0.0.1's by default); the app names visitors by the same rule (kutnahora.web.visitors).
        proxy_headers=bool(args.trusted_proxies),
        forwarded_allow_ips=[str(network) for network in args.trusted_proxies] or None,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.05)
        where = endpoint.url if endpoint is not None else "off"
        print(
            f"kutnahora-web serving http://{shown}:{port} (game server {args.server}, metrics {where})",
            flush=True,
        )

    announcer = asyncio.create_task(announce())
    try:
        await server.serve(sockets=[sock])
    finally:
        announcer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await announcer
    return 0 if server.started else 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-web``."""
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"kutnahora-web: --port must be from 0 to 65535, not {args.port}.", file=sys.stderr)
        return 2
    logs.configure(args.log_format, args.log_level)
    try:
        sock = bind(args.host, args.port)
    except OSError as error:
        print(f"kutnahora-web: cannot serve on {args.host}:{args.port}: {error.strerror}.", file=sys.stderr)
        return 2
    metrics = WebMetrics()
    endpoint = None
    try:
        if args.metrics_port is not None:
            endpoint = MetricsEndpoint(metrics.registry, args.metrics_host, args.metrics_port)
    except OSError as error:
        sock.close()
        where = f"{args.metrics_host}:{args.metrics_port}"
        print(f"kutnahora-web: cannot serve metrics on {where}: {error.strerror}.", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(args, sock, metrics, endpoint))
    except ResultsError as error:
        print(f"kutnahora-web: {error}.", file=sys.stderr)
        return 2
    except ClientError as error:
        print(f"kutnahora-web: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        sock.close()
        if endpoint is not None:
            endpoint.close()


if __name__ == "__main__":
    sys.exit(main())
