"""The command-line flags of the sandbox's limits, shared by ``kutnahora-tournament`` and
``kutnahora-arena-worker``: one set of names, help texts and defaults
(:class:`~kutnahora.hosting.sandbox.Limits`), and the :class:`Limits` they set."""

from __future__ import annotations

import argparse
from typing import Any

from kutnahora.hosting.sandbox import Limits


def add_limit_arguments(group: Any, log_note: str = "") -> None:
    """Add ``--bot-cpu`` … ``--build-cpu`` to ``group`` (a parser or an argument group); ``log_note`` is
    said after ``--bot-log``'s default."""
    default = Limits()
    group.add_argument(
        "--bot-cpu", type=int, default=default.cpu_seconds, help="CPU seconds per game (default %(default)s)"
    )
    group.add_argument(
        "--bot-memory",
        type=int,
        default=default.memory_bytes >> 20,
        help="memory in MiB: with cgroups (v2, or v1 as root) the resident memory and /tmp of all the "
        "bot's processes together; without them (the first lines say which) the address space of each "
        "process (default %(default)s)",
    )
    group.add_argument(
        "--bot-cpu-weight",
        type=int,
        default=default.cpu_weight,
        help="the CPU weight of all the bots together, in percent of any other process's (1 to 100), with "
        "cgroups' cpu controller: the server and the runners go first on a busy machine (0: not bounded; "
        "default %(default)s)",
    )
    group.add_argument(
        "--bot-cores",
        type=float,
        default=default.cores,
        help="with --bot-cpu-weight, the cores all the bot's processes may use at once (0: any; default "
        "%(default)s)",
    )
    group.add_argument(
        "--bot-processes",
        type=int,
        default=default.processes,
        help="processes and threads of the whole bot (default %(default)s)",
    )
    group.add_argument(
        "--bot-open-files", type=int, default=default.open_files, help="open files (default %(default)s)"
    )
    group.add_argument(
        "--bot-file-size",
        type=int,
        default=default.file_bytes >> 20,
        help="largest file in MiB (default %(default)s)",
    )
    group.add_argument(
        "--bot-tmp",
        type=int,
        default=default.tmp_bytes >> 20,
        help="size of its /tmp in MiB (default %(default)s)",
    )
    group.add_argument(
        "--bot-log",
        type=int,
        default=default.log_bytes >> 10,
        help=f"output kept per game in KiB; more stops the bot (default %(default)s{log_note})",
    )
    group.add_argument(
        "--build-cpu",
        type=int,
        default=default.build_seconds,
        help="CPU seconds for a build (default %(default)s)",
    )


def limits_of(args: argparse.Namespace) -> Limits:
    """The sandbox's limits the flags of :func:`add_limit_arguments` set."""
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
