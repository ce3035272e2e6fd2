"""Hostile hosted submissions (tests/clients/hostile/) are contained while one tournament with them completes.

One tournament, played once for the module: a well-behaved submission and the built-in greedy bot play
against submissions that read another submission's files and the server's database, connect to
127.0.0.1:5432, fork without end, allocate 8 GB, fill the disk, sleep for ever, print a gigabyte, kill
their parents, spin the CPU, or cannot be built or read. Each test checks what the sandbox stopped (in the
bot's per-game log and the results' reason) and that every game still ended with a result.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clients.helpers import ROOT, TournamentRun, start_process, stop_process

HOSTILE = ROOT / "tests" / "clients" / "hostile"
LOG_KIB = 256
PROCESSES = 48
MEMORY_MIB = 512

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)


@dataclass
class Run(TournamentRun):
    db: Path
    folder: Path


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("hostile")
    submissions = folder / "submissions"
    shutil.copytree(HOSTILE, submissions)
    db = folder / "server.db"
    socket = folder / "server.sock"
    (submissions / "reader" / "targets.txt").write_text(
        f"{db}\n{submissions / 'good' / 'kutnahora-bot.toml'}\n/etc/shadow\n"
    )
    server, address = start_process(
        "kutnahora.server.main",
        *("--port", "0", "--db", str(db), "--metrics-port", "off", "--log-level", "warning"),
        *("--unix-socket", str(socket)),
    )
    try:
        os.chmod(socket, 0o666)
        out = folder / "results.json"
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from kutnahora.clients.tournament.cli import main; sys.exit(main())",
                *("--submissions", str(submissions), "--bots", "greedy", "--players", "2"),
                *("--games", "14", "--seed", "1", "--concurrency", "4", "--move-timeout", "45"),
                *("--bot-cpu", "3", "--bot-processes", str(PROCESSES), "--bot-log", str(LOG_KIB)),
                *("--bot-memory", str(MEMORY_MIB), "--sandbox-runtime", str(folder / "leases")),
                *("--server", address, "--server-socket", str(socket), "--out", str(out), "--quiet"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        results = json.loads(out.read_text())
        yield Run(done.returncode, done.stdout + done.stderr, results, folder / "results.logs", db, folder)
    finally:
        stop_process(server)


def test_the_tournament_completes_and_every_game_has_a_result(run: Run) -> None:
    assert run.code == 1, run.output  # three submissions could not play: the exit status says so
    assert "3 submission(s) could not play (badmanifest, failingbuild, missingprogram)" in run.output
    games = run.results["games"]
    assert len(games) == 14
    assert all(g["scores"] is not None for g in games), [g for g in games if g["scores"] is None]
    for bot in ("good", "greedy", "reader", "network", "forkbomb", "memory", "disk", "sleeper"):
        assert run.games_of(bot), f"{bot} played no game: the schedule must give every bot a seat"


def test_the_well_behaved_bots_play_without_failures(run: Run) -> None:
    assert run.games_of("good")
    assert run.failures_of("good") == []
    assert run.failures_of("greedy") == []
    assert "finished" in run.log_of("good")


def test_no_wall_was_breached(run: Run) -> None:
    logs = "\n".join(run.log_of(b) for b in ("reader", "network", "forkbomb", "memory", "disk", "parricide"))
    assert "BLOCKED" in logs
    assert "LEAKED" not in logs, logs


def test_another_submission_and_the_database_cannot_be_read(run: Run) -> None:
    log = run.log_of("reader")
    assert f"BLOCKED read {run.db}" in log
    assert "good/kutnahora-bot.toml" in log and "LEAKED read" not in log
    assert "BLOCKED read /etc/shadow" in log
    assert "BLOCKED write /bot: Read-only file system" in log
    assert "submissions" not in log.split("visible at /:")[1]
    assert run.db.exists() and run.db.stat().st_size > 0  # the server's store is untouched and in use


def test_the_network_is_closed(run: Run) -> None:
    log = run.log_of("network")
    assert "BLOCKED connect 127.0.0.1:5432" in log
    assert "BLOCKED connect 10.0.0.1:80" in log


def test_a_fork_bomb_meets_the_process_limit(run: Run) -> None:
    log = run.log_of("forkbomb")
    children = int(log.split("BLOCKED fork after ")[1].split()[0])
    assert children < PROCESSES
    assert all("process limit" in f["reason"] for f in run.failures_of("forkbomb"))


def test_eight_gigabytes_are_refused(run: Run) -> None:
    failures = run.failures_of("memory")
    assert failures and "LEAKED" not in run.log_of("memory")
    if run.results["config"]["walls"]["limits"] == "prlimit":  # each process's address space
        assert "BLOCKED allocating 8 GB: MemoryError" in run.log_of("memory")
        assert all("out of memory" in f["reason"] for f in failures)
    else:  # the bot's cgroup: the kernel kills it at the limit
        assert all(f["reason"] == f"out of memory (limit {MEMORY_MIB} MiB)" for f in failures)


def test_the_disk_cannot_be_filled(run: Run) -> None:
    log = run.log_of("disk")
    assert "BLOCKED writing /tmp after 64 MiB: No space left on device" in log
    assert "BLOCKED writing /bot: Read-only file system" in log


def test_a_sleeper_loses_its_seat_to_the_timeout(run: Run) -> None:
    failures = run.failures_of("sleeper")
    assert failures and all(f["status"] == "timeout" for f in failures)
    assert "made no decision" in failures[0]["reason"]


def test_a_flood_of_output_is_cut_and_the_bot_stopped(run: Run) -> None:
    failures = run.failures_of("shouter")
    assert failures and all("flooded its output" in f["reason"] for f in failures)
    for game in run.games_of("shouter"):
        seat = game["bots"].index("shouter")
        size = (run.logs / f"{game['game_id']}-seat{seat}.log").stat().st_size
        assert LOG_KIB * 1024 <= size < LOG_KIB * 1024 + 200


def test_killing_its_parents_reaches_nothing_outside(run: Run) -> None:
    log = run.log_of("parricide")
    assert "BLOCKED kill process 1: Operation not permitted" in log
    assert "of other users besides process 1: []" in log


def test_a_cpu_spinner_meets_the_cpu_limit(run: Run) -> None:
    failures = run.failures_of("spinner")
    assert failures and all("CPU time limit" in f["reason"] for f in failures)


def test_unusable_submissions_are_named_and_lose_their_seats(run: Run) -> None:
    reasons = {b: run.failures_of(b)[0]["reason"] for b in ("badmanifest", "failingbuild", "missingprogram")}
    assert "badmanifest: kutnahora-bot.toml lacks run" in reasons["badmanifest"]
    log = run.folder / "results.logs" / "failingbuild.build.log"
    assert (
        "submission failingbuild: the build (echo compiling; exit 2) failed with status 2 "
        f"(its output: {log}); it ended with: compiling" in reasons["failingbuild"]
    )
    assert log.read_text() == "compiling\n"  # kept beside the results, not deleted with the work folder
    assert (
        "submission missingprogram: the run command's program ./target/release/bot is not in"
        in (reasons["missingprogram"])
    )
    assert "failingbuild could not play" in run.output
