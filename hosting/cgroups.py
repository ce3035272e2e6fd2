"""Memory and process limits for a whole hosted bot (all its processes together) with control groups.

The runner picks, once, the strongest way this machine offers (:func:`detect`):

* ``cgroup v2``: a cgroup2 hierarchy with the ``memory`` and ``pids`` controllers, where the runner's own
  group is writable and delegated to it (it may make child groups and enable those controllers in them);
* ``cgroup v1``: the ``memory`` and ``pids`` hierarchies of cgroup v1, mounted and writable (as root);
* ``prlimit``: neither; each process of the bot is then limited on its own (address space and the
  process count of the bot's user), so a bot of many processes may use a multiple of the memory limit.

Under a group of the runner's own (``kutnahora-runner-PID``), each bot run gets a group (``bot-N``) with
``memory`` (``memory.max`` / ``memory.limit_in_bytes``, swap included where the kernel counts it) and
``pids`` (``pids.max``) set. When the runner asks for it (``cpu_weight`` given to :func:`detect`) and the
``cpu`` controller can be used too, each bot's processes together may use at most ``cores`` cores
(``cpu.max`` / ``cpu.cfs_quota_us``), and the runner's group, holding all its bots, gets the CPU weight
asked for (in percent of the default: ``cpu.weight`` in v2, that share of 1024 ``cpu.shares`` in v1):
when the machine is short of CPU the server and the runners go first, so a bot that spins (or floods and
spins on its refusals) slows its own games, not everyone's. Off by default: on a machine busy with other
work, a low weight starves the bots. The bot's first process joins
the group before anything of the bot runs
(:meth:`BotGroup.enter`, a shell prefix run by the runner's user), so every process it starts is counted.
After the bot ends, whatever is left in the group is killed and the group removed; the runner's group is
removed when the runner stops (:meth:`Cgroups.close`, also on an interrupt), and groups left by a runner
that died are removed by the next one (:meth:`Cgroups.reclaim`).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from kutnahora.hosting.processes import running

RUNNER_PREFIX = "kutnahora-runner-"
CPU_PERIOD_US = 100_000
MIB = 1 << 20
RECLAIM_SECONDS = 30.0  # how often a runner removes the groups of dead runners beside its own
MOUNTINFO = Path("/proc/self/mountinfo")
OWN_GROUPS = Path("/proc/self/cgroup")


@dataclass(slots=True)
class BotGroup:
    """One bot run's group (one folder per hierarchy: one for v2, ``memory`` and ``pids`` for v1)."""

    folders: list[Path]
    version: int
    memory_bytes: int
    cpu: Path | None = None  # v1's folder in the cpu hierarchy (v2 has one folder for everything)

    def enter(self) -> str:
        """A shell line that moves the shell running it into the group (``exec`` the bot after it)."""
        folders = [*self.folders, *([self.cpu] if self.cpu is not None else [])]
        return " && ".join(f"echo $$ > {_quote(folder / 'cgroup.procs')}" for folder in folders)

    def oom_killed(self) -> int:
        """How many of the bot's processes the kernel killed for passing the memory limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        text = _read(self.folders[0] / name)
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def peak_bytes(self) -> int | None:
        """The most memory the bot's processes held at once, when the kernel says."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        value = _read(self.folders[0] / name).strip()
        return int(value) if value.isdigit() else None

    def kill(self) -> None:
        """Kill every process left in the group (repeatedly: a process may fork while it is killed)."""
        for _ in range(100):
            pids = {int(p) for f in self.folders for p in _read(f / "cgroup.procs").split() if p.isdigit()}
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and remove the group's folders."""
        self.kill()
        for folder in [*self.folders, *([self.cpu] if self.cpu is not None else [])]:
            _rmdir(folder)


@dataclass(slots=True)
class Cgroups:
    """Where this runner makes its bots' groups; ``mode`` is ``cgroup v2``, ``cgroup v1`` or ``prlimit``."""

    mode: str
    parents: list[Path] = field(default_factory=list)  # the runner's own group, in each hierarchy
    cpu: Path | None = None  # v1: the runner's group in the cpu hierarchy; v2: the group itself, if cpu is on
    _count: itertools.count[int] = field(default_factory=itertools.count)
    _reclaimed: float = 0.0  # when the groups of dead runners beside this one were last removed

    @property
    def in_force(self) -> bool:
        return self.mode != "prlimit"

    def describe(self) -> str:
        """One sentence for the runner's first lines and the results file."""
        if self.mode == "prlimit":
            return (
                "prlimit: memory and processes limited per process (no writable cgroup hierarchy with "
                "memory and pids controllers)"
            )
        where = ", ".join(str(p) for p in [*self.parents, *([self.cpu] if self.cpu else [])])
        what = "memory, processes and CPU" if self.cpu is not None else "memory and processes"
        return f"{self.mode}: {what} limited for each bot as a whole (groups under {where})"

    def create(self, memory_bytes: int, processes: int, cores: float = 0.0) -> BotGroup | None:
        """A new group for one bot run, its limits set (``cores``: at most that many cores for its
        processes together, where the cpu controller is in use; 0 for no bound); None in ``prlimit``
        mode."""
        if not self.in_force:
            return None
        now = time.monotonic()
        if now - self._reclaimed >= RECLAIM_SECONDS:
            # A runner killed beside this one (an arena worker lost mid-game) leaves its groups behind;
            # a long-lived runner removes them as it goes, not only when it starts.
            self._reclaimed = now
            Cgroups.reclaim([*self.parents, *([self.cpu] if self.cpu is not None else [])])
        name = f"bot-{next(self._count)}"
        folders = [parent / name for parent in self.parents]
        version = 2 if self.mode == "cgroup v2" else 1
        for folder in folders:
            folder.mkdir()
        cpu = self.cpu / name if version == 1 and self.cpu is not None else None
        if cpu is not None:
            cpu.mkdir()
        group = BotGroup(folders, version, memory_bytes, cpu)
        quota = str(int(cores * CPU_PERIOD_US)) if cores > 0 else None
        try:
            if version == 2:
                _write(folders[0] / "memory.max", str(memory_bytes))
                with contextlib.suppress(OSError):
                    _write(folders[0] / "memory.swap.max", "0")
                _write(folders[0] / "pids.max", str(processes))
                if self.cpu is not None and quota is not None:
                    _write(folders[0] / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            else:
                if cpu is not None and quota is not None:
                    _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                    _write(cpu / "cpu.cfs_quota_us", quota)
                memory, pids = folders
                _write(memory / "memory.limit_in_bytes", str(memory_bytes))
                with contextlib.suppress(OSError):  # only where swap is accounted
                    _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
                _write(pids / "pids.max", str(processes))
        except OSError:
            group.remove()
            raise
        return group

    def close(self) -> None:
        """Remove every group this runner made (killing what is left in them)."""
        for parent in self.parents:
            _remove_tree(parent)
        if self.cpu is not None and self.cpu not in self.parents:
            _remove_tree(self.cpu)

    @staticmethod
    def reclaim(parents: list[Path]) -> None:
        """Remove the groups of runners that are no longer running, beside ``parents``."""
        for parent in parents:
            for other in parent.parent.glob(RUNNER_PREFIX + "*"):
                pid = other.name.removeprefix(RUNNER_PREFIX).removesuffix(".self")
                if pid.isdigit() and not running(int(pid)):
                    _remove_tree(other)


def detect(runner: str | None = None, cpu_weight: int = 0) -> Cgroups:
    """The strongest limits this machine lets the runner set, with the runner's own group made.
    ``runner`` names that group (default ``kutnahora-runner-PID``); ``cpu_weight`` (percent of the
    default, 1 to 100; 0: the CPU is not bounded) puts the bots under the cpu controller too."""
    name = runner or f"{RUNNER_PREFIX}{os.getpid()}"
    mounts = _mounts()
    own = _own_groups()
    v2 = mounts.get("cgroup2")
    if v2 is not None:
        parent = _join(v2, own.get("", "/"))
        found = _make_v2(parent, name)
        if found is not None:
            Cgroups.reclaim([found])
            cpu = found if cpu_weight > 0 and _cpu_v2(parent, found, cpu_weight) else None
            return Cgroups("cgroup v2", [found], cpu=cpu)
    memory, pids = mounts.get("memory"), mounts.get("pids")
    if memory is not None and pids is not None:
        parents: list[Path] = []
        try:
            for mount, controller in ((memory, "memory"), (pids, "pids")):
                base = _join(mount, own.get(controller, "/"))
                folder = base / name
                folder.mkdir(exist_ok=True)
                parents.append(folder)
            if _read(parents[0] / "memory.use_hierarchy").strip() == "0":
                _write(parents[0] / "memory.use_hierarchy", "1")  # the bots' groups count in the runner's
        except OSError:
            for folder in parents:
                _rmdir(folder)
        else:
            Cgroups.reclaim(parents)
            cpu = _cpu_v1(mounts.get("cpu"), own, name, cpu_weight) if cpu_weight > 0 else None
            return Cgroups("cgroup v1", parents, cpu=cpu)
    return Cgroups("prlimit")


def _make_v2(parent: Path, name: str) -> Path | None:
    """The runner's group under its own cgroup2 group, with memory and pids enabled for the bots'
    groups below it; None when the subtree is not delegated to the runner.

    cgroup v2 lets a group hand controllers to its children only when no process sits in it, and a
    delegated group (systemd's ``Delegate=yes``) holds the runner itself: the runner then moves into a
    leaf of its own (``NAME.self``) first, and back if the controllers still cannot be enabled."""
    if not {"memory", "pids"} <= set(_read(parent / "cgroup.controllers").split()):
        return None
    folder = parent / name
    leaf = parent / f"{name}.self"
    moved = False
    try:
        if not {"memory", "pids"} <= set(_read(parent / "cgroup.subtree_control").split()):
            try:
                _write(parent / "cgroup.subtree_control", "+memory +pids")
            except OSError as error:
                if error.errno != errno.EBUSY:
                    raise
                leaf.mkdir(exist_ok=True)
                _write(leaf / "cgroup.procs", str(os.getpid()))
                moved = True
                _write(parent / "cgroup.subtree_control", "+memory +pids")
        folder.mkdir(exist_ok=True)
        _write(folder / "cgroup.subtree_control", "+memory +pids")
    except OSError:
        if moved:
            with contextlib.suppress(OSError):
                _write(parent / "cgroup.procs", str(os.getpid()))
        _rmdir(folder)
        _rmdir(leaf)
        return None
    return folder


def _cpu_v2(parent: Path, folder: Path, weight: int) -> bool:
    """Turn the cpu controller on for the bots' groups, the runner's group weighted low; False when the
    hierarchy does not offer it."""
    try:
        if "cpu" not in _read(parent / "cgroup.subtree_control").split():
            _write(parent / "cgroup.subtree_control", "+cpu")
        _write(folder / "cgroup.subtree_control", "+cpu")
        _write(folder / "cpu.weight", str(max(1, min(100, weight))))
    except OSError:
        return False
    return True


def _cpu_v1(mount: Path | None, own: dict[str, str], name: str, weight: int) -> Path | None:
    """The runner's group in v1's cpu hierarchy, weighted low; None when there is none to use."""
    if mount is None:
        return None
    folder = _join(mount, own.get("cpu", "/")) / name
    try:
        folder.mkdir(exist_ok=True)
        _write(folder / "cpu.shares", str(max(2, 1024 * min(100, weight) // 100)))
    except OSError:
        _rmdir(folder)
        return None
    Cgroups.reclaim([folder])
    return folder


def _mounts() -> dict[str, Path]:
    """Mount points: ``cgroup2`` for the unified hierarchy, a controller's name for a v1 one."""
    found: dict[str, Path] = {}
    for line in _read(MOUNTINFO).splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split()
        if len(after) < 3:
            continue
        kind, options = after[0], after[2].split(",")
        point = Path(fields[4].replace("\\040", " "))
        if kind == "cgroup2":
            found.setdefault("cgroup2", point)
        elif kind == "cgroup":
            for controller in ("memory", "pids", "cpu"):
                if controller in options:
                    found.setdefault(controller, point)
    return found


def _own_groups() -> dict[str, str]:
    """The runner's own group in each hierarchy: ``""`` for v2, a controller's name for v1."""
    groups: dict[str, str] = {}
    for line in _read(OWN_GROUPS).splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                groups[controller] = parts[2]
    return groups


def _join(mount: Path, group: str) -> Path:
    """The folder of ``group`` under ``mount``; the mount itself when the group is not visible there."""
    folder = mount / group.lstrip("/")
    return folder if folder.is_dir() else mount


def _remove_tree(folder: Path) -> None:
    """Remove a group and every group below it, deepest first, killing their processes."""
    if not folder.is_dir():
        return
    for child in sorted((p for p in folder.iterdir() if p.is_dir()), reverse=True):
        _remove_tree(child)
    BotGroup([folder], 1, 0).kill()
    _rmdir(folder)


def _rmdir(folder: Path) -> None:
    for _ in range(50):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if error.errno != errno.EBUSY:
                return
        time.sleep(0.02)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"
