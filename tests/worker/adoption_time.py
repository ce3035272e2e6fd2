"""How long a fresh sandbox worker takes from a host lease to its bot's first seat: building the version
itself, or adopting the built folder another worker uploaded (docs/hosted-bots.md, "Built once for all
workers"). Against the test suite's fake arena and a real game server, with workers walled in (root):

    python -m tests.worker.adoption_time go 3     # the Go kit (clients/go), 3 rounds of each
    python -m tests.worker.adoption_time cpp 2    # the C++ kit

One worker builds the kit once (a build job: build, pack, upload); then, in each round, a new worker is
given a host lease naming that built folder, and another a host lease without it (so it builds), each
timed from the lease being queued to the seat reported started.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import time
from pathlib import Path

from kutnahora.hosting.archives import pack
from kutnahora.v1 import hosting_service_pb2 as pb
from tests.clients.helpers import ROOT, SERVER_FLAGS, start_process, stop_process
from tests.worker.fake_arena import FakeArena
from tests.worker.spawn import spawn_worker, work_folder

NAMES = {"go": "go-first-option", "cpp": "cpp-first-option"}
FOLDERS: list[Path] = []  # the workers' folders, removed at the end


async def worker(arena: FakeArena, *flags: str) -> tuple[asyncio.subprocess.Process, Path]:
    work = work_folder()
    FOLDERS.append(work)
    token = work / "token"
    token.write_text(arena.token + "\n")
    log = work / "worker.log"
    process = await spawn_worker(arena.address, token, work / "w", work / "leases", log, *flags)
    return process, log


async def stop(process: asyncio.subprocess.Process) -> None:
    process.terminate()
    await asyncio.wait_for(process.wait(), 60)


async def ready_time(arena: FakeArena, name: str, archive: bytes, built: pb.BuiltArtifact | None) -> float:
    process, log = await worker(arena, "--seats", "1", "--builds", "0")
    calls = len(arena.lease_calls)
    await arena.wait_for(lambda: len(arena.lease_calls) > calls, timeout=120)  # the worker is up
    started = len([r for r in arena.seat_reports if r.outcome == pb.SEAT_OUTCOME_STARTED])
    begin = time.monotonic()
    arena.queue_host(name, archive, built=built)
    await arena.wait_for(
        lambda: len([r for r in arena.seat_reports if r.outcome == pb.SEAT_OUTCOME_STARTED]) > started,
        timeout=1200,
    )
    seconds = time.monotonic() - begin
    await stop(process)
    text = log.read_text(errors="replace")
    assert ("adopted" in text) == (built is not None), text[-3000:]
    return seconds


async def main(kit: str, rounds: int) -> None:
    server, address = start_process("kutnahora.server.main", "--host", "127.0.0.1", *SERVER_FLAGS)
    arena = await FakeArena(address).start()
    try:
        archive = pack(ROOT / "clients" / kit)
        name = NAMES[kit]
        builder, _ = await worker(arena, "--seats", "0", "--builds", "1")
        begin = time.monotonic()
        arena.queue_build(name, 1, archive)
        await arena.wait_for(lambda: len(arena.build_reports) == 1, timeout=1800)
        build_job = time.monotonic() - begin
        await stop(builder)
        (report,) = arena.build_reports
        assert report.ok and report.built_digest, report
        artifact, data = arena.built[report.built_digest]
        assert artifact.size_bytes == len(data)
        print(
            f"{kit}: build job (build + pack + upload) {build_job:.1f} s; built folder "
            f"{len(data) / 2**20:.2f} MiB packed, archive {len(archive)} bytes",
            flush=True,
        )
        built, adopted = [], []
        for n in range(rounds):
            adopted.append(await ready_time(arena, name, archive, artifact))
            built.append(await ready_time(arena, name, archive, None))
            print(f"round {n + 1}: adopt {adopted[-1]:.1f} s, build {built[-1]:.1f} s", flush=True)
        ratio = statistics.median(built) / statistics.median(adopted)
        print(
            f"{kit}: median to the first seat started: adopting {statistics.median(adopted):.1f} s, "
            f"building {statistics.median(built):.1f} s, ratio {ratio:.1f}",
            flush=True,
        )
    finally:
        await arena.stop()
        stop_process(server)
        for folder in FOLDERS:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in NAMES:
        raise SystemExit("usage: python -m tests.worker.adoption_time go|cpp ROUNDS")
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
