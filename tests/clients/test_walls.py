"""The walls a hostile bot meets beyond the basic ones (tests/clients/walls/): its seat only, its memory
as a whole, nothing of the host in view.

One tournament, played once for the module against a server of the test's own (so that its games can be
counted afterwards): a well-behaved submission and the built-in greedy bot play

* ``filler``, which calls ``CreateGame`` (300 times), ``ListGames``, ``JoinGame``, ``AbandonGame`` and
  reflection through its socket, then keeps a child calling ``CreateGame`` while it plays its seat;
* ``hog``, whose four children each take 96 MiB (each alone fits the 256 MiB limit, together they do not);
* ``explorer``, which lists and reads the runner's checkout, its home, ``/work``, and says where its
  ``kutnahora`` package and its mounts come from (``/proc/self/mountinfo``), then plays;
* ``daemon``, which leaves a daemon (double fork, a session of its own) behind, then plays.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kutnahora.hosting.cgroups import detect
from kutnahora.hosting.sandbox import interpreter_paths
from tests.clients.helpers import ROOT, SERVER_FLAGS, TournamentRun, start_process, stop_process

WALLS = ROOT / "tests" / "clients" / "walls"
MEMORY_MIB = 256
GAMES = 8


def cgroups_mode() -> str:
    found = detect(f"kutnahora-probe-{os.getpid()}")
    found.close()
    return found.mode


pytestmark = [
    pytest.mark.skipif(
        shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
    ),
    pytest.mark.skipif(
        os.geteuid() != 0, reason="the walls under test (cgroups, leased users) need a root runner"
    ),
]


@dataclass
class Run(TournamentRun):
    games_on_server: int


def count_games(address: str) -> int:
    code = (
        "import asyncio, sys\n"
        "from kutnahora.clients.sdk import Client\n"
        "async def main():\n"
        "    async with await Client.connect(sys.argv[1]) as client:\n"
        "        print(len(await client.list_games(page_size=500)))\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", code, address], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    if cgroups_mode() == "prlimit":
        pytest.skip("no writable cgroup hierarchy with the memory and pids controllers on this machine")
    folder = tmp_path_factory.mktemp("walls")
    submissions = folder / "submissions"
    for name in ("filler", "hog", "explorer", "daemon"):
        shutil.copytree(WALLS / name, submissions / name)
    shutil.copytree(ROOT / "tests" / "clients" / "hostile" / "good", submissions / "good")
    home = Path.home()
    (submissions / "explorer" / "targets.txt").write_text(
        f"{ROOT}\n{ROOT / 'pyproject.toml'}\n{ROOT / 'tests'}\n{home}\n{home / '.bashrc'}\n/work\n{folder}\n"
    )
    socket = folder / "server.sock"
    server, address = start_process("kutnahora.server.main", *SERVER_FLAGS, "--unix-socket", str(socket))
    try:
        out = folder / "results.json"
        done = subprocess.run(
            [
                *(sys.executable, "-m", "kutnahora.clients.tournament.cli"),
                *("--submissions", str(submissions), "--bots", "greedy", "--players", "2"),
                *("--games", str(GAMES), "--seed", "2", "--concurrency", "4", "--move-timeout", "30"),
                *("--bot-memory", str(MEMORY_MIB), "--sandbox-runtime", str(folder / "leases")),
                *("--server", address, "--server-socket", str(socket), "--out", str(out), "--quiet"),
            ],
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
            env={**os.environ, "HOG_MIB": "96"},
        )
        results = json.loads(out.read_text())
        yield Run(
            done.returncode, done.stdout + done.stderr, results, folder / "results.logs", count_games(address)
        )
    finally:
        stop_process(server)


def test_every_game_ends_and_the_runner_exits_0(run: Run) -> None:
    assert run.code == 0, run.output
    assert len(run.results["games"]) == GAMES
    assert all(g["scores"] is not None for g in run.results["games"])
    for bot in ("good", "filler", "hog", "explorer", "daemon"):
        assert run.games_of(bot), f"{bot} played no game"
    assert run.failures_of("good") == [] and run.failures_of("greedy") == []


def test_the_walls_in_force_are_said_first_and_recorded(run: Run) -> None:
    walls = run.results["config"]["walls"]
    assert walls["limits"] in ("cgroup v1", "cgroup v2")
    assert f"{MEMORY_MIB} MiB of memory and 64 processes for the whole bot" in walls["description"]
    assert f"Sandbox: bubblewrap; limits: 120 CPU s, {MEMORY_MIB} MiB of memory" in run.output


def test_a_bot_cannot_create_list_join_or_abandon_games_through_its_socket(run: Run) -> None:
    log = run.log_of("filler")
    for call in ("CreateGame", "ListGames", "JoinGame", "AbandonGame", "ServerReflectionInfo"):
        assert f"BLOCKED {call}: PERMISSION_DENIED a hosted bot may only play its own seat" in log
    assert "BLOCKED CreateGame x300: 0 created" in log
    assert "LEAKED" not in log, log
    assert run.failures_of("filler") == []  # its own seat it may play, and it did
    assert run.games_on_server == GAMES  # the server holds the tournament's games and no other


def test_four_children_together_cannot_pass_the_memory_limit(run: Run) -> None:
    log = run.log_of("hog")
    assert "LEAKED" not in log, log
    assert "BLOCKED only" in log and "a child was killed by signal 9" in log
    assert "child 0 holds 8 MiB" in log  # each child did start taking memory
    failures = run.failures_of("hog")
    assert failures and all(f["reason"] == f"out of memory (limit {MEMORY_MIB} MiB)" for f in failures)


def test_the_runners_checkout_home_and_files_are_not_in_view(run: Run) -> None:
    log = run.log_of("explorer")
    assert "LEAKED" not in log, log
    assert f"BLOCKED list {ROOT}: No such file or directory" in log
    assert f"BLOCKED read {ROOT / 'pyproject.toml'}: No such file or directory" in log
    assert f"BLOCKED list {ROOT / 'tests'}: No such file or directory" in log
    assert "BLOCKED list /work: No such file or directory" in log or not Path("/work").exists()
    assert "package at /run/kutnahora/python/kutnahora/clients" in log
    home = Path.home()
    # Of the home folder, only the way to the interpreter (when it lies there) is shown, nothing else.
    shown = {Path(p).relative_to(home).parts[0] for p in interpreter_paths() if Path(p).is_relative_to(home)}
    listed = [line for line in log.splitlines() if line.startswith(f"listed {home}:")]
    for line in listed:
        assert set(ast.literal_eval(line.split(": ", 1)[1])) <= shown, line
    assert f"BLOCKED read {home / '.bashrc'}: No such file or directory" in log
    assert run.failures_of("explorer") == []


def test_mountinfo_names_no_host_path_of_the_package_or_the_submission(run: Run, tmp_path: Path) -> None:
    """The package, the .proto files and the submission are bound from the run's own tmpfs: their
    mountinfo lines name neutral paths, never the checkout, the package's folders or the work folder."""
    log = run.log_of("explorer")
    line = next(line for line in log.splitlines() if line.startswith("mount sources "))
    sources = set(ast.literal_eval(line.removeprefix("mount sources ")))
    same_place = {"/", *interpreter_paths(), "/usr", "/etc", "/opt", "/proc", "/dev"}
    host = [s for s in sources if s not in same_place and not any(s.startswith(p + "/") for p in same_place)]
    for source in host:
        assert str(ROOT) not in source and "kutnahora-hosted" not in source and "/tmp/" not in source, source
    assert "/explorer" in sources  # the submission: the root of its folder in the run's tmpfs
    assert "/python/kutnahora/clients" in sources  # the package's folders: their copies there
    assert "/.protos" in sources
    assert any(source.startswith("/.gateways/seat-") for source in sources)  # its gateway's socket


def test_the_results_say_what_each_submission_cost_the_runner(run: Run) -> None:
    hosting = run.results["hosting"]
    assert set(hosting) == {"filler", "hog", "explorer", "daemon", "good"}
    for name, usage in hosting.items():
        assert usage["most_calls"] <= 16 and usage["most_bytes"] <= 8 << 20, name
        if name != "hog":  # killed for its memory before it calls anything
            assert usage["calls"] > 0 and usage["cpu_seconds"] > 0 and usage["bytes_down"] > 0, name
    # the filler's 300 CreateGame calls and the rest, all refused at its gateway
    assert hosting["filler"]["refused"]["outside_seat"] >= 300


def test_no_daemon_outlives_its_game(run: Run) -> None:
    assert "left a daemon behind" in run.log_of("daemon")
    assert run.failures_of("daemon") == []
    mark = b"kutnahora-daemon-mark-5d1f"
    alive = []
    for process in Path("/proc").iterdir():
        try:
            if process.name.isdigit() and mark in (process / "cmdline").read_bytes():
                alive.append(process.name)
        except OSError:
            continue
    assert alive == [], f"daemons still running: {alive}"
