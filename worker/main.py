"""``kutnahora-arena-worker``: build the arena's hosted bots and play their games, walled in.

Examples::

    kutnahora-arena-worker --arena arena.example:50061 --tls --worker-token-file /run/secrets/worker-token
    kutnahora-arena-worker --arena localhost:50061 --worker-token-file token --seats 4 --builds 2 \\
        --work /var/lib/kutnahora-worker --metrics-port 9465

The worker leases work from the arena's HostingService (the arena's ``--worker-token-file`` holds the same
token; it travels with every call, so off the arena's machine connect with ``--tls``, and ``--ca-cert``
for a private CA), builds each hosted version once in the sandbox, and plays each hosted bot's rated games
with its code, one game at a time per bot, through the arena's matchmaking. See docs/hosted-bots.md, "The
sandbox workers".

Exit status: 0 when stopped by SIGTERM or SIGINT (every lease released, no bot left running), 1 when the
arena refuses the worker (its token, or hosting not enabled on the arena), 2 for a usage error or a
sandbox this machine cannot build.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from prometheus_client import start_http_server

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ConnectError, read_ca_cert
from kutnahora.hosting.gateway_flags import gateway_limits_of
from kutnahora.hosting.limit_flags import limits_of
from kutnahora.hosting.sandbox import Sandbox, SandboxError
from kutnahora.plumbing import logs
from kutnahora.worker.builds import Builder
from kutnahora.worker.context import Context
from kutnahora.worker.hosting_client import HostingClient
from kutnahora.worker.metrics import WorkerMetrics
from kutnahora.worker.options import build_parser
from kutnahora.worker.worker import Worker, WorkerRefused

SOCKET_PATH_CAP = 107  # the longest Unix socket path gRPC binds


class UsageError(Exception):
    """The command line or the machine cannot run a worker; the message says why."""


def read_token(path: Path) -> str:
    """The worker token: the file's first line."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise UsageError(f"cannot read the worker token from {path}: {error.strerror or error}") from None
    if not token:
        raise UsageError(f"{path} holds no worker token")
    return token


def arena_root(args: argparse.Namespace) -> bytes | None:
    """The CA certificate ``--ca-cert`` names (None without one: the system's CAs, over TLS)."""
    try:
        return read_ca_cert(args.ca_cert)
    except ConnectError as error:
        raise UsageError(str(error).rstrip(".")) from None


def connect_arena(args: argparse.Namespace, token: str) -> tuple[HostingClient, ArenaClient]:
    """The worker's two clients of the arena at ``--arena``, its HostingService (with ``token``) and its
    ArenaService: over TLS with ``--tls`` or ``--ca-cert``, plain otherwise."""
    root = arena_root(args)
    hosting = HostingClient(args.arena, token, tls=args.tls, root_certificates=root)
    arena = ArenaClient(args.arena, tls=args.tls, root_certificates=root)
    return hosting, arena


def make_sandbox(args: argparse.Namespace) -> Sandbox | None:
    """The sandbox the arguments ask for, set up (None with ``--sandbox none``)."""
    if args.sandbox == "none":
        return None
    sandbox = Sandbox(limits_of(args))
    try:
        sandbox.setup(args.sandbox_runtime)
    except SandboxError as error:
        raise UsageError(str(error)) from None
    return sandbox


async def serve(args: argparse.Namespace, sandbox: Sandbox | None, work: Path) -> int:
    """Run the worker until SIGTERM or SIGINT; the exit status."""
    log = logs.get_logger("kutnahora.worker")
    metrics = WorkerMetrics()
    if args.metrics_port:
        try:
            start_http_server(args.metrics_port, addr=args.metrics_host, registry=metrics.registry)
        except OSError as error:
            raise UsageError(f"cannot serve metrics on port {args.metrics_port}: {error}") from None
    token = read_token(args.worker_token_file)
    hosting, arena = connect_arena(args, token)
    builder = Builder(hosting, work, sandbox, log, keep=args.keep_versions, metrics=metrics)
    room = builder.setup()
    longest = room / ".gateways" / f"seat-{os.getpid()}-{10**9}.sock"
    if len(str(longest)) > SOCKET_PATH_CAP:
        raise UsageError(
            f"the seat gateways' sockets would lie under {room / '.gateways'}, too long a path for a Unix "
            f"socket ({SOCKET_PATH_CAP} characters at most); give a shorter --work"
        )
    context = Context(
        name=f"{socket.gethostname()}:{os.getpid()}",
        hosting=hosting,
        arena=arena,
        builder=builder,
        sandbox=sandbox,
        gateways=room / ".gateways",
        seat_logs=work / "seat-logs",
        metrics=metrics,
        log=log,
        gateway=gateway_limits_of(args),
    )
    worker = Worker(context, seats=args.seats, builds=args.builds)
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, worker.stop)
    if sandbox is not None:
        log.info("sandbox: bubblewrap", walls=sandbox.describe())
    else:
        log.warning("sandbox: none; the hosted bots run unwalled as the worker's own user")
    try:
        await worker.run()
    except WorkerRefused as error:
        log.error("the arena refuses this worker", error=str(error))
        return 1
    finally:
        await arena.close()
        await hosting.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-arena-worker``."""
    args = build_parser().parse_args(argv)
    problem = _check(args)  # before the logs are set up: a usage error leaves the process's logging alone
    if problem:
        print(f"kutnahora-arena-worker: {problem}", file=sys.stderr)
        return 2
    try:
        logs.configure(args.log_format, args.log_level)
    except ValueError as error:
        print(f"kutnahora-arena-worker: {error}.", file=sys.stderr)
        return 2
    sandbox: Sandbox | None = None
    temporary = args.work is None
    work = Path(tempfile.mkdtemp(prefix="kutnahora-worker-")) if temporary else Path(args.work)
    try:
        read_token(args.worker_token_file)
        arena_root(args)
        sandbox = make_sandbox(args)
        return asyncio.run(serve(args, sandbox, work.resolve()))
    except UsageError as error:
        print(f"kutnahora-arena-worker: {error}.", file=sys.stderr)
        return 2
    finally:
        if sandbox is not None:
            sandbox.close()  # the bots' control groups (what is left in them is killed) and the tmpfs
        if temporary:
            shutil.rmtree(work, ignore_errors=True)


def _check(args: argparse.Namespace) -> str:
    if args.seats < 0 or args.builds < 0 or args.seats + args.builds == 0:
        return "--seats and --builds must be 0 or more, and not both 0."
    if args.keep_versions < 1:
        return "--keep-versions must be at least 1."
    return ""


if __name__ == "__main__":
    sys.exit(main())
