"""The command line of ``kutnahora-arena-worker``: where the arena is, the slots, the sandbox's limits."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kutnahora.hosting.gateway_limits import GatewayLimits
from kutnahora.hosting.sandbox import Limits

ENV_ARENA = "KUTNAHORA_ARENA"


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
    default = Limits()
    limits.add_argument(
        "--bot-cpu", type=int, default=default.cpu_seconds, help="CPU seconds per game (default %(default)s)"
    )
    limits.add_argument(
        "--bot-memory",
        type=int,
        default=default.memory_bytes >> 20,
        help="memory in MiB: with cgroups the resident memory and /tmp of all the bot's processes together, "
        "else the address space of each process (default %(default)s)",
    )
    limits.add_argument(
        "--bot-processes",
        type=int,
        default=default.processes,
        help="processes and threads of the whole bot (default %(default)s)",
    )
    limits.add_argument(
        "--bot-open-files", type=int, default=default.open_files, help="open files (default %(default)s)"
    )
    limits.add_argument(
        "--bot-file-size",
        type=int,
        default=default.file_bytes >> 20,
        help="largest file in MiB (default %(default)s)",
    )
    limits.add_argument(
        "--bot-tmp",
        type=int,
        default=default.tmp_bytes >> 20,
        help="size of its /tmp in MiB (default %(default)s)",
    )
    limits.add_argument(
        "--bot-log",
        type=int,
        default=default.log_bytes >> 10,
        help="output kept per game in KiB; more stops the bot (default %(default)s; the arena keeps the last "
        "64 KiB)",
    )
    limits.add_argument(
        "--bot-cores",
        type=float,
        default=default.cores,
        help="with --bot-cpu-weight, the cores all the bot's processes may use at once (default %(default)s)",
    )
    limits.add_argument(
        "--bot-cpu-weight",
        type=int,
        default=default.cpu_weight,
        help="the CPU weight of all the bots together, in percent of any other process's (1 to 100), with "
        "cgroups' cpu controller (0: not bounded; default %(default)s)",
    )
    limits.add_argument(
        "--build-cpu",
        type=int,
        default=default.build_seconds,
        help="CPU seconds for a build (default %(default)s)",
    )
    gateway = GatewayLimits()
    limits.add_argument(
        "--gateway-rate",
        type=float,
        default=gateway.rate,
        help="calls and Play messages per second one bot may make through its seat gateway; an accepted "
        "decision and a turn are not counted (default %(default)s)",
    )
    limits.add_argument(
        "--gateway-cpu",
        type=float,
        default=gateway.cpu_share,
        help="share of one core of the worker one bot's calls may use; past it they wait "
        "(default %(default)s)",
    )
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


def limits_of(args: argparse.Namespace) -> Limits:
    """The sandbox's limits the arguments set."""
    return Limits(
        cpu_seconds=args.bot_cpu,
        memory_bytes=args.bot_memory << 20,
        processes=args.bot_processes,
        open_files=args.bot_open_files,
        file_bytes=args.bot_file_size << 20,
        tmp_bytes=args.bot_tmp << 20,
        log_bytes=args.bot_log << 10,
        build_seconds=args.build_cpu,
        cores=args.bot_cores,
        cpu_weight=args.bot_cpu_weight,
    )
