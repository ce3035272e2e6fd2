"""A probe of a server's responsiveness: ``GetServerInfo`` every few milliseconds on its own connection.

A server whose event loop stalls answers nothing for the stall's length, however fast each handler is;
its own handler histogram does not see it. The probe runs in its own process (so that no load shares its
event loop) and on its own connection, calls ``AdminService.GetServerInfo`` every ``--interval-ms``
(waiting for each answer before the next call), and reports each window's p50, p99, p99.9 and maximum
latency. ``kutnahora-hold --probe-interval-ms 20`` and ``python -m kutnahora.bench.bare_floor`` start it
beside their load; it also runs alone against any server:

    python -m kutnahora.bench.probe --target 127.0.0.1:50051 --duration 60 --report-every 10
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Sequence

import grpc
import grpc.aio

from kutnahora.bench.windows import Window, emit, millis, spread, windows_on_schedule
from kutnahora.clients.help_format import DefaultsHelpFormatter
from kutnahora.v1 import admin_service_pb2, admin_service_pb2_grpc


async def probe(
    target: str, interval: float, duration: float, every: float, json_lines: bool, timeout: float = 10.0
) -> int:
    """Call GetServerInfo every ``interval`` seconds for ``duration`` seconds; print a window every
    ``every`` seconds (a JSON line when ``json_lines``, else a line for people). The number of failed
    calls (each counted in the window, with the time it took as its latency)."""
    channel = grpc.aio.insecure_channel(target)
    stub = admin_service_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
    request = admin_service_pb2.GetServerInfoRequest()
    await stub.GetServerInfo(request, timeout=timeout, wait_for_ready=True)  # connected before the start
    latencies: list[float] = []
    failures = 0
    stopping = asyncio.Event()

    async def calls() -> None:
        nonlocal failures
        while not stopping.is_set():
            began = time.perf_counter()
            try:
                await stub.GetServerInfo(request, timeout=timeout)
            except grpc.aio.AioRpcError:
                failures += 1
            took = time.perf_counter() - began
            latencies.append(took)
            await asyncio.sleep(max(0.0, interval - took))

    def take(number: int, seconds: float) -> Window:
        window = Window(number, seconds, len(latencies), list(latencies), {"probe_failures": failures})
        latencies.clear()
        return window

    caller = asyncio.create_task(calls())
    elapsed = 0.0
    async for window in windows_on_schedule(time.monotonic(), duration, every, take):
        if json_lines:
            emit(window)
        else:
            elapsed += window.seconds
            load = "/".join(f"{value:.1f}" for value in os.getloadavg())
            print(
                f"probe: {elapsed:6.0f} s  "
                f"{window.decisions} calls  {millis(spread(window.latencies))}  {failures} failed  "
                f"load {load}",
                flush=True,
            )
    stopping.set()
    await caller
    await channel.close(None)
    return failures


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.probe",
        description="Call GetServerInfo every few milliseconds on its own connection and report the "
        "latency's p50, p99, p99.9 and maximum per window.",
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("--target", required=True, help="the server's host:port")
    parser.add_argument("--interval-ms", type=float, default=20.0, help="milliseconds between calls")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds to probe")
    parser.add_argument("--report-every", type=float, default=10.0, help="seconds per window")
    parser.add_argument("--json", action="store_true", help="print each window as a JSON line")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Probe and print; exit 1 when a call failed."""
    args = build_parser().parse_args(argv)
    if args.interval_ms <= 0 or args.duration <= 0 or args.report_every <= 0:
        raise SystemExit("--interval-ms, --duration and --report-every must be positive")
    failures = asyncio.run(
        probe(args.target, args.interval_ms / 1000, args.duration, args.report_every, args.json)
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
