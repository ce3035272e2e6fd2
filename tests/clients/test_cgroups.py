"""Per-bot control groups: what they bound, that they are removed, and that a dead runner's are reclaimed.

These need a writable cgroup hierarchy with the ``memory`` and ``pids`` controllers (v2 delegated to the
runner, or v1 as root) and skip, saying so, where there is none (the runner then limits each process with
``prlimit``, which ``test_hostile.py`` covers).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kutnahora.hosting.cgroups import RUNNER_PREFIX, Cgroups, detect
from tests.clients.helpers import ROOT

MIB = 1 << 20


@pytest.fixture
def cgroups() -> Iterator[Cgroups]:
    found = detect(f"{RUNNER_PREFIX}test-{os.getpid()}")
    if not found.in_force:
        pytest.skip("no writable cgroup hierarchy with the memory and pids controllers on this machine")
    try:
        yield found
    finally:
        found.close()


def run_in(command: str, enter: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", "-c", f'{enter} && exec "$@"', "join", "/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_group_bounds_the_memory_of_all_its_processes_together(cgroups: Cgroups) -> None:
    group = cgroups.create(96 * MIB, 64)
    assert group is not None
    # Three processes of 40 MiB each (forked together, each holding for 5 s): each alone fits in 96 MiB,
    # all three do not.
    hold = (
        "import os, time\n"
        "for _ in range(3):\n"
        "    if os.fork() == 0:\n"
        "        b = bytearray(os.urandom(1)) * (40 << 20)\n"
        '        print("held", flush=True)\n'
        "        time.sleep(5)\n"
        "        os._exit(0)\n"
        "for _ in range(3):\n"
        "    os.wait()\n"
    )
    done = run_in(f"{sys.executable} -c '{hold}'", group.enter())
    # the kernel killed one (or, short of killing, refused it memory): all three never held at once
    assert group.oom_killed() >= 1 or "MemoryError" in done.stderr, done.stdout + done.stderr
    peak = group.peak_bytes()
    assert peak is None or peak <= 96 * MIB
    folders = list(group.folders)
    group.remove()
    assert not any(folder.exists() for folder in folders)


def test_a_group_bounds_the_processes_of_all_its_processes_together(cgroups: Cgroups) -> None:
    group = cgroups.create(256 * MIB, 10)
    assert group is not None
    # Two branches of one bot fork as many sleeping children as they can (the children hold on until the
    # group is removed): together they share the one limit of 10, the bot's own three processes included.
    forker = (
        "import os, time\n"
        "branches = []\n"
        "for _ in range(2):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        n = 0\n"
        "        try:\n"
        "            while n < 100:\n"
        "                if os.fork() == 0:\n"
        "                    os.closerange(0, 3)\n"
        "                    time.sleep(120)\n"
        "                    os._exit(0)\n"
        "                n += 1\n"
        "        except OSError:\n"
        "            pass\n"
        "        os.write(1, str(n).encode() + bytes([10]))  # one write: the branches share the pipe\n"
        "        os._exit(0)\n"
        "    branches.append(pid)\n"
        "for pid in branches:\n"
        "    os.waitpid(pid, 0)\n"
    )
    done = run_in(f"exec {sys.executable} -c '{forker}'", group.enter())
    counts = [int(n) for n in done.stdout.split()]
    # At most 10 at once: the bot's process and its two branches, 7 children; one more when a branch that
    # is done leaves its place to the other.
    assert len(counts) == 2 and 7 <= sum(counts) <= 8, done.stdout
    group.remove()  # the sleeping children are killed with it
    assert not any(folder.exists() for folder in group.folders)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_group_bounds_the_cpu_of_all_its_processes_together() -> None:
    """Two spinning processes in a group of 0.2 cores use 0.2 cores between them, at most."""
    cgroups = detect(f"{RUNNER_PREFIX}test-cpu-{os.getpid()}", cpu_weight=100)
    if cgroups.cpu is None:
        cgroups.close()
        pytest.skip("no cgroup cpu controller the runner may use here")
    group = cgroups.create(256 << 20, 16, cores=0.2)
    assert group is not None
    spin = f"{sys.executable} -c 'while True: pass'"
    shell = f"{group.enter()} && ({spin} & exec {spin})"
    process = subprocess.Popen(["/bin/sh", "-c", shell], start_new_session=True)
    try:
        time.sleep(0.5)
        pids = [
            int(p) for f in [group.cpu or group.folders[0]] for p in (f / "cgroup.procs").read_text().split()
        ]
        assert len(pids) >= 2  # the two spinners (and the shell, while it waits)
        before = sum(_cpu_seconds(pid) for pid in pids)
        time.sleep(3)
        used = sum(_cpu_seconds(pid) for pid in pids) - before
        assert used <= 3 * 0.2 * 1.25, f"{used:.2f} CPU seconds in 3 s"
    finally:
        group.remove()
        process.wait(10)
        cgroups.close()


def test_a_dead_runners_groups_are_reclaimed_by_the_next(cgroups: Cgroups) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    left = [parent.parent / f"{RUNNER_PREFIX}{pid}" for parent in cgroups.parents]
    for folder in left:
        (folder / "bot-0").mkdir(parents=True)
    Cgroups.reclaim(cgroups.parents)
    assert not any(folder.exists() for folder in left)
    assert all(parent.exists() for parent in cgroups.parents)  # a live runner's groups stay


def test_a_runner_that_goes_on_reclaims_the_groups_of_one_killed_beside_it(cgroups: Cgroups) -> None:
    """An arena worker lives for days: one killed beside it (its groups left) is cleaned up as it goes."""
    first = cgroups.create(64 * MIB, 16)
    assert first is not None
    first.remove()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    left = [parent.parent / f"{RUNNER_PREFIX}{int(dead.stdout)}" for parent in cgroups.parents]
    for folder in left:
        (folder / "bot-0").mkdir(parents=True)
    cgroups._reclaimed -= 3600  # as if the last look were long ago
    second = cgroups.create(64 * MIB, 16)
    assert second is not None
    second.remove()
    assert not any(folder.exists() for folder in left)
    assert all(parent.exists() for parent in cgroups.parents)


def running_bot(runner_group: Path) -> list[int]:
    """The processes of one bot group of the runner's that holds any (none yet: empty). A bot's group is
    removed when its game ends, so one listed may be gone by the time it is read: it is passed over."""
    for bot in runner_group.glob("bot-*"):
        try:
            pids = [int(p) for p in (bot / "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            continue
        if pids:
            return pids
    return []


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_an_interrupted_runner_removes_its_groups_and_stops_its_bots(
    cgroups: Cgroups, tmp_path: Path
) -> None:
    submissions = tmp_path / "submissions"
    shutil.copytree(ROOT / "tests" / "clients" / "hostile" / "sleeper", submissions / "sleeper")
    runner = subprocess.Popen(
        [
            *(sys.executable, "-m", "kutnahora.clients.tournament.cli"),
            *("--submissions", str(submissions), "--bots", "greedy", "--players", "2", "--games", "2"),
            *("--sandbox-runtime", str(tmp_path / "leases"), "--out", str(tmp_path / "r.json"), "--quiet"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    groups = [parent.parent / f"{RUNNER_PREFIX}{runner.pid}" for parent in cgroups.parents]
    try:
        deadline = time.monotonic() + 120
        pids: list[int] = []
        while time.monotonic() < deadline and not pids:
            pids = running_bot(groups[0])
            time.sleep(0.2)
        assert pids, "no bot ever ran in a group of the runner's"
        runner.send_signal(signal.SIGTERM)
        output = runner.communicate(timeout=60)[0]
    finally:
        runner.kill()
        runner.wait(10)
    assert runner.returncode == 130, output
    assert not any(group.exists() for group in groups), output
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
