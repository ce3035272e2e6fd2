"""The command line of ``kutnahora-arena-worker``: where the arena is, the slots, the sandbox's limits."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kutnahora.hosting.gateway_flags import add_gateway_arguments
from kutnahora.hosting.limit_flags import add_limit_arguments

ENV_ARENA = "KUTNAHORA_ARENA"
ENV_ARENA_TLS = "KUTNAHORA_ARENA_TLS"
ENV_ARENA_CA_CERT = "KUTNAHORA_ARENA_CA_CERT"


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-arena-worker",
        description="A sandbox worker of a Kutná Hora arena: it leases work from the arena, builds the "
        "bots' hosted code once in the sandbox and plays their rated games with it, one game at a time "
        "per bot. Stop it with SIGTERM or SIGINT: its bots are stopped and its leases released.",
        epilog="Every hosted seat gets the same limits, the ones below. See docs/hosted-bots.md, "
        "'The sandbox workers'.",
    )
    parser.add_argument(
        "--arena",
        default=os.environ.get(ENV_ARENA, "localhost:50061"),
        help=f"the arena's address host:port (default: ${ENV_ARENA} or localhost:50061)",
    )
    parser.add_argument(
        "--worker-token-file",
        type=Path,
        required=True,
        help="file holding the arena's worker token (the file the arena's --worker-token-file names)",
    )
    connection = parser.add_argument_group(
        "the connection to the arena",
        "The worker token travels with every call: off this machine, connect over TLS.",
    )
    connection.add_argument(
        "--tls",
        action="store_true",
        default=os.environ.get(ENV_ARENA_TLS, "") not in ("", "0"),
        help=f"connect to the arena over TLS, as its --tls-cert serves it (default: ${ENV_ARENA_TLS})",
    )
    connection.add_argument(
        "--ca-cert",
        default=os.environ.get(ENV_ARENA_CA_CERT) or None,
        help="PEM file of the CA that signed the arena's certificate; implies --tls (default: the system's "
        f"CAs, or ${ENV_ARENA_CA_CERT})",
    )
    parser.add_argument(
        "--seats",
        type=int,
        default=2,
        help="bots hosted at once, each playing one game at a time (default 2)",
    )
    parser.add_argument("--builds", type=int, default=1, help="builds run at once (default 1)")
    parser.add_argument(
        "--work",
        type=Path,
        help="the worker's folder: archives kept by digest, builds, seat logs while they are played "
        "(default: a temporary folder removed at the end)",
    )
    parser.add_argument(
        "--keep-versions",
        type=int,
        default=16,
        metavar="N",
        help="versions kept on disk: the built folders and archives of the N most recently used (and of "
        "every version a job plays now); older ones are removed (default 16)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("bwrap", "none"),
        default="bwrap",
        help="bwrap: each bot in bubblewrap with the limits below (needs root or unprivileged user "
        "namespaces); none: unwalled, for trusted code only (default bwrap)",
    )
    parser.add_argument(
        "--sandbox-runtime",
        type=Path,
        metavar="DIR",
        help="where the runners of this host lease the sandbox user ids (default $KUTNAHORA_SANDBOX_RUNTIME "
        "or /run/kutnahora-sandbox)",
    )
    limits = parser.add_argument_group("the limits of every hosted seat")
    add_limit_arguments(limits, log_note="; the arena keeps the last 64 KiB")
    add_gateway_arguments(limits)
    observe = parser.add_argument_group("logs and metrics")
    observe.add_argument(
        "--metrics-port",
        type=int,
        default=0,
        help="serve Prometheus metrics on this port at /metrics (default 0: not served)",
    )
    observe.add_argument(
        "--metrics-host", default="0.0.0.0", help="address of the metrics port (default 0.0.0.0)"
    )
    observe.add_argument(
        "--log-format",
        choices=("json", "console"),
        default="json",
        help="log lines as JSON or text (default json)",
    )
    observe.add_argument("--log-level", default="info", help="debug, info, warning or error (default info)")
    return parser
