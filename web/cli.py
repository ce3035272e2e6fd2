"""``kutnahora-web``: serve the game in a browser, as a client of a Kutná Hora game server.

    kutnahora-web --server localhost:50051 --port 8080
    kutnahora-web --server localhost:50051 --results results.json     # with a tournament's standings

It prints the address it serves once it is ready. It may start before its game server: it serves its pages
at once, saying "game server unavailable" until it reaches the server, retrying with a growing wait, and
reconnects by itself when the game server stops or restarts. Requests must name it by an allowed host name
(``--allowed-hosts``; by default the address it serves), so that a DNS-rebinding page cannot use it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from kutnahora.clients.help_format import DefaultsHelpFormatter
from kutnahora.clients.sdk import ClientError
from kutnahora.web.app import create_app
from kutnahora.web.hosts import default_hosts
from kutnahora.web.standings import ResultsError


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
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log level (default info)",
    )
    parser.add_argument("--no-access-log", action="store_true", help="do not log each request")
    parser.add_argument(
        "--allowed-hosts",
        metavar="NAMES",
        help=(
            "comma-separated host names the Host header may give ('*' for any); default: the --host address, "
            "with localhost, 127.0.0.1 and ::1 when it is a loopback address"
        ),
    )
    return parser


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


async def serve(args: argparse.Namespace, sock: socket.socket) -> int:
    app = create_app(
        args.server,
        tls=args.tls,
        ca_cert=args.ca_cert,
        results=args.results,
        allowed_hosts=allowed_hosts(args),
    )
    config = uvicorn.Config(
        app,
        log_level=args.log_level,
        access_log=not args.no_access_log,
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
        print(f"kutnahora-web serving http://{shown}:{port} (game server {args.server})", flush=True)

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
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        sock = bind(args.host, args.port)
    except OSError as error:
        print(f"kutnahora-web: cannot serve on {args.host}:{args.port}: {error.strerror}.", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(args, sock))
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


if __name__ == "__main__":
    sys.exit(main())
