"""The sandbox worker against a fake arena (tests/worker/fake_arena.py) and a real game server: builds
reported with their logs, hosted seats played through the sandbox and the seat gateway and reported with
theirs, a handed-over seat resumed, winding down, a lost lease, and a clean stop on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client
from kutnahora.hosting.archives import pack
from kutnahora.hosting.cgroups import RUNNER_PREFIX, detect
from kutnahora.v1 import game_pb2
from kutnahora.v1 import hosting_service_pb2 as pb
from tests.worker.conftest import HOSTILE, sleepy
from tests.worker.fake_arena import FakeArena

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's walls (leased users, cgroups) need root"),
]

GOOD = pack(HOSTILE / "good")
FAILING = pack(HOSTILE / "failingbuild")


def processes_running(marker: str, games: set[str] | None = None) -> list[int]:
    """The live (not zombie) processes whose command line holds ``marker``; with ``games``, only those
    of a seat of one of these games (its id in their environment, ``KUTNAHORA_GAME_ID``, or in their
    command line, as bubblewrap is given it), so that other tests' bots running beside this one
    (pytest-xdist) are not counted."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "status").read_text()
            if marker not in command or "zombie" in state:
                continue
            if games is not None:
                seen = command + (entry / "environ").read_bytes().decode(errors="replace")
                if not any(game in seen for game in games):
                    continue
        except OSError:
            continue
        found.append(int(entry.name))
    return found


def runner_groups(pid: int) -> list[Path]:
    """Where the control groups of the runner (worker) ``pid`` would lie."""
    probe = detect(f"{RUNNER_PREFIX}probe-{os.getpid()}")
    try:
        return [parent.parent / f"{RUNNER_PREFIX}{pid}" for parent in probe.parents]
    finally:
        probe.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scrape(port: int) -> dict[str, float]:
    """The worker's metrics, by sample name and labels."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return {
        sample.name + str(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def settled_metrics(port: int, name: str, value: float, timeout: float = 10.0) -> dict[str, float]:
    """The worker's metrics once ``name`` reads ``value`` (a report reaches the arena a moment before the
    worker counts its lease as ended), or as they are after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        metrics = scrape(port)
        if metrics.get(name) == value or asyncio.get_running_loop().time() > deadline:
            return metrics
        await asyncio.sleep(0.1)


def ended(arena: FakeArena) -> list[pb.ReportSeatRequest]:
    return [r for r in arena.seat_reports if r.outcome != pb.SEAT_OUTCOME_STARTED]


async def test_builds_are_reported_with_their_logs_and_each_archive_fetched_once(
    arena: FakeArena, start_worker: Any
) -> None:
    good = arena.queue_build("good", 1, GOOD)
    failing = arena.queue_build("failingbuild", 1, FAILING)
    arena.queue_build("good", 1, GOOD)  # the same version again (a build lease that expired elsewhere)
    port = free_port()
    worker = await start_worker("--seats", "0", "--builds", "1", "--metrics-port", str(port))
    await arena.wait_for(lambda: len(arena.build_reports) == 3)
    leases = {r.lease_id: arena.leases[r.lease_id].job.digest for r in arena.build_reports}
    by_digest: dict[str, list[pb.ReportBuildRequest]] = {}
    for report in arena.build_reports:
        by_digest.setdefault(leases[report.lease_id], []).append(report)
    assert [r.ok for r in by_digest[good]] == [True, True], worker.output()
    assert by_digest[good][0].reason == ""
    (bad,) = by_digest[failing]
    assert not bad.ok
    assert "failed with status 2" in bad.reason and "compiling" in bad.reason
    assert b"compiling" in bad.log
    assert str(worker.work) not in bad.reason  # no path of the worker's reaches the author
    assert arena.archive_fetches.count(good) == 1 and arena.archive_fetches.count(failing) == 1
    assert arena.releases == []  # a reported build ends its lease
    assert all(not call.can_host for call in arena.lease_calls)
    metrics = await settled_metrics(port, "kutnahora_worker_leases[('kind', 'build')]", 0)
    assert (
        metrics["kutnahora_worker_builds_total[('outcome', 'ok')]"] == 2
    )  # built once, reported for both jobs
    assert metrics["kutnahora_worker_builds_total[('outcome', 'failed')]"] == 1
    assert metrics["kutnahora_worker_leases[('kind', 'build')]"] == 0
    assert await worker.terminate() == 0


async def test_a_hosted_bot_plays_its_game_to_the_end_and_stops_when_paused(
    arena: FakeArena, start_worker: Any
) -> None:
    arena.pause_after_reports = 1
    arena.queue_host("good", GOOD, games_left=3)
    port = free_port()
    worker = await start_worker("--seats", "1", "--builds", "0", "--metrics-port", str(port))
    await arena.wait_for(lambda: len(arena.releases) == 1, timeout=120)
    metrics = scrape(port)
    assert metrics["kutnahora_worker_seats_total[('outcome', 'finished')]"] == 1, worker.output()
    assert metrics["kutnahora_worker_seats_total[('outcome', 'failed')]"] == 0
    started = [r for r in arena.seat_reports if r.outcome == pb.SEAT_OUTCOME_STARTED]
    (report,) = ended(arena)
    assert len(started) == 1 and started[0].game_id == report.game_id == arena.games[0]
    assert started[0].seat_token and started[0].server_address == arena.game_server
    assert report.outcome == pb.SEAT_OUTCOME_FINISHED, (report.reason, report.log, worker.output())
    assert report.seat_token == ""  # the token is sent with STARTED only
    assert report.game_id.encode() in report.log  # what the bot printed, from inside the sandbox
    assert not report.log_truncated
    async with await Client.connect(arena.game_server) as client:
        summary = await client.get_game(report.game_id)
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    assert arena.releases[0][1] == "the bot is paused"  # the arena's answer ended the job after one game
    assert len(arena.games) == 1
    assert await worker.terminate() == 0


async def test_a_crashing_bot_is_reported_failed_with_its_reason_and_log(
    arena: FakeArena, start_worker: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "crasher"
    folder.mkdir()
    (folder / "kutnahora-bot.toml").write_text(
        'name = "crasher"\nlanguage = "python"\nrun = "python3 crash.py"\n'
    )
    (folder / "crash.py").write_text(
        'import os\nprint("looking at seat", os.environ["KUTNAHORA_SEAT"])\n'
        'print(*sorted(f"{k}={v}" for k, v in os.environ.items()))\nraise SystemExit(3)\n'
    )
    arena.queue_host("crasher", pack(folder), games_left=1)
    worker = await start_worker("--seats", "1", "--builds", "0")
    await arena.wait_for(lambda: len(arena.releases) == 1, timeout=120)
    (report,) = ended(arena)
    assert report.outcome == pb.SEAT_OUTCOME_FAILED, worker.output()
    assert "status 3" in report.reason
    assert b"looking at seat 0" in report.log
    # Its environment holds its seat, and neither the lease's seek key nor the worker token.
    assert b"KUTNAHORA_TOKEN=" in report.log and b"KUTNAHORA_SERVER=unix:" in report.log
    lease = arena.leases[report.lease_id]
    assert lease.seek_key.encode() not in report.log and arena.token.encode() not in report.log
    assert arena.releases[0][1] == "the games of its lease are played"
    assert await worker.terminate() == 0


async def test_a_seat_handed_over_is_played_first(arena: FakeArena, start_worker: Any) -> None:
    async with await Client.connect(arena.game_server) as client:
        created, seats = await client.create_seated_game(["good", "greedy"], seed=11)
    opponent = asyncio.create_task(_play(arena.game_server, seats[1]))
    resume = pb.SeatToResume(
        server_address=arena.game_server, game_id=created.game.game_id, seat=0, seat_token=seats[0].token
    )
    arena.queue_host("good", GOOD, games_left=0, resume=resume)
    worker = await start_worker("--seats", "1", "--builds", "0")
    try:
        await arena.wait_for(lambda: len(arena.releases) == 1, timeout=120)
    finally:
        await asyncio.wait_for(opponent, 60)
    (report,) = ended(arena)
    assert report.game_id == created.game.game_id and report.seat == 0
    assert report.outcome == pb.SEAT_OUTCOME_FINISHED, (report.reason, report.log, worker.output())
    assert arena.seeks == []  # no game left this hour: it resumed the seat and sought none
    assert arena.releases[0][1] == "the games of its lease are played"
    assert await worker.terminate() == 0


async def _play(address: str, seat: Any) -> None:
    async with await Client.connect(address) as client:
        await client.play(make_bot("greedy", 3), seat)


async def test_winding_down_withdraws_the_seek_and_releases_the_lease(
    arena: FakeArena, start_worker: Any
) -> None:
    arena.hold_seeks = True
    arena.lease_time = 1.5
    arena.queue_host("good", GOOD, games_left=5)
    worker = await start_worker("--seats", "1", "--builds", "0")
    await arena.wait_for(lambda: arena.seeks_open == 1, timeout=60)
    arena.wind_down = "a newer version was built"
    await arena.wait_for(lambda: len(arena.releases) == 1, timeout=30)
    assert arena.releases[0][1] == "winding down: a newer version was built", worker.output()
    await arena.wait_for(lambda: arena.seeks_open == 0, timeout=10)  # the ticket withdrawn
    assert arena.seat_reports == []
    assert await worker.terminate() == 0


async def test_a_lease_the_arena_no_longer_knows_stops_its_seat_at_once(
    arena: FakeArena, start_worker: Any, tmp_path: Path
) -> None:
    folder, marker = sleepy(tmp_path / "sleepy")
    arena.lease_time = 1.5
    arena.queue_host("sleepy", pack(folder), games_left=2)
    worker = await start_worker("--seats", "1", "--builds", "0")
    await arena.wait_for(lambda: len(arena.seat_reports) == 1, timeout=60)
    await arena.wait_for(lambda: bool(processes_running(marker)), timeout=30)
    lease_id = arena.seat_reports[0].lease_id
    arena.forgotten.add(lease_id)
    for _ in range(50):  # a renewal comes within half a second; the bot is stopped then
        if not processes_running(marker):
            break
        await asyncio.sleep(0.1)
    assert not processes_running(marker), worker.output()
    await asyncio.sleep(1.0)
    assert len(arena.seat_reports) == 1  # nothing more is reported under a lost lease
    assert arena.releases == []
    assert worker.process.returncode is None  # the worker goes on, asking for more work
    assert "lease lost" in worker.output()
    assert await worker.terminate() == 0


async def test_sigterm_stops_the_bots_releases_the_leases_and_leaves_nothing_behind(
    arena: FakeArena, start_worker: Any, tmp_path: Path
) -> None:
    folder, marker = sleepy(tmp_path / "sleepy")
    arena.queue_host("sleepy", pack(folder), games_left=2)
    worker = await start_worker("--seats", "1", "--builds", "0")
    await arena.wait_for(lambda: len(arena.seat_reports) == 1, timeout=60)
    await arena.wait_for(lambda: bool(processes_running(marker)), timeout=30)
    groups = runner_groups(worker.pid)
    assert await worker.terminate(30) == 0, worker.output()
    assert processes_running(marker) == []
    assert not any(group.exists() for group in groups), groups
    assert [reason for _, reason in arena.releases] == ["the worker is stopping"]
    assert len(arena.seat_reports) == 1  # the seat is left to the game server's clock, and handed over
    mounts = Path("/proc/mounts").read_text()
    assert str(worker.work) not in mounts  # the sandbox's tmpfs is unmounted
    game = arena.seat_reports[0].game_id
    async with await Client.connect(arena.game_server) as client:
        summary = await client.get_game(game)
    assert summary.status == game_pb2.GAME_STATUS_ACTIVE  # its game goes on


async def test_a_wrong_worker_token_ends_the_worker_with_the_arenas_sentence(
    arena: FakeArena, start_worker: Any
) -> None:
    worker = await start_worker("--seats", "1", token_text="another-token")
    code = await asyncio.wait_for(worker.process.wait(), 60)
    assert code == 1
    assert "the worker token is missing or wrong" in worker.output()


async def test_an_arena_out_of_reach_is_asked_again_until_it_answers(
    arena: FakeArena, start_worker: Any
) -> None:
    port = arena.port
    await arena.stop()
    worker = await start_worker("--seats", "0", "--builds", "1")
    for _ in range(100):
        if worker.output().count("the arena cannot be reached") >= 2:
            break
        await asyncio.sleep(0.1)
    assert worker.output().count("the arena cannot be reached") >= 2, worker.output()
    assert worker.process.returncode is None
    await arena.start(port)
    arena.queue_build("good", 1, GOOD)
    await arena.wait_for(lambda: len(arena.build_reports) == 1, timeout=60)
    assert arena.build_reports[0].ok
    assert await worker.terminate() == 0
