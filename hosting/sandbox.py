"""The walls around a hosted bot: bubblewrap namespaces, per-bot limits, a leased user and a seat gateway.

Each bot process runs as ``[join its cgroup] bwrap`` … ``prlimit`` … ``setpriv`` … ``sh -c RUN``:

* bubblewrap (Debian's ``bubblewrap``) gives it a root of its own holding only what a bot needs: the
  system folders (``/usr``, ``/etc``, ``/opt``) and the runner's Python (its prefix with its libraries)
  read-only, the installed ``kutnahora`` package read-only at ``/run/kutnahora/python`` (each of its
  folders bound from where it really lies, never the checkout or home around it; ``PYTHONPATH`` points
  there), its own submission folder read-only at ``/bot`` (writable only while it is built), a private
  ``/tmp`` of ``tmp_bytes``, fresh ``/proc`` and ``/dev``, its own PID, IPC, UTS and network namespaces
  (no network at all: the only way out is the Unix socket bound in at ``/run/kutnahora/server.sock``,
  which leads to its seat gateway, :mod:`kutnahora.hosting.gateway`), and the project's
  ``.proto`` files read-only at ``/run/kutnahora/protos`` (``KUTNAHORA_PROTOS``), so that a build can
  generate its code without the network;
* its memory and process count are limited for all its processes together by a control group of its
  own where the machine allows (:mod:`kutnahora.hosting.cgroups`), and ``prlimit`` sets CPU
  seconds, processes, open files and file size (and, without cgroups, address space) per process;
* the package, the ``.proto`` files and the submissions are copied, once per run, into a tmpfs of the
  run's own (:meth:`Sandbox.stage`, when the runner is root), and bound from there: a bind mount's
  ``/proc/self/mountinfo`` line names its source's path within its filesystem, which for the tmpfs is a
  neutral one (``/python/kutnahora/clients``, ``/NAME``; the seat gateways' sockets are made there too),
  so nothing inside names where the package, the
  checkout or the run's work folder lie on the host (the system folders and the runner's Python are bound
  where they lie, at the same paths: they name nothing the bot does not see);
* ``setpriv`` drops to a user id of its own, leased for the bot's life from a range shared by every
  runner on the host (:mod:`kutnahora.hosting.leases`), so that the process limit counts that
  bot's processes only and the runner's files, the server's database and the other bots are out of reach.

Run by root, bubblewrap sets up the namespaces itself; run by another user, it needs unprivileged user
namespaces, and every bot then runs as that user (the process limit counts all of them together).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kutnahora.hosting.cgroups import BotGroup, Cgroups, detect
from kutnahora.hosting.leases import Lease, LeaseError, UidLeases

SOCKET_INSIDE = "/run/kutnahora/server.sock"
PROTOS_INSIDE = "/run/kutnahora/protos"
PACKAGE_INSIDE = "/run/kutnahora/python"
FOLDER_INSIDE = "/bot"
ENV_PROTOS = "KUTNAHORA_PROTOS"
PACKAGE = "kutnahora"
MIB = 1 << 20


class SandboxError(Exception):
    """The sandbox cannot be used on this machine; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one bot may use, per game (``build_seconds``: the build's CPU seconds)."""

    cpu_seconds: int = 120
    memory_bytes: int = 4096 * MIB
    processes: int = 64
    open_files: int = 256
    file_bytes: int = 64 * MIB
    tmp_bytes: int = 64 * MIB
    log_bytes: int = 1 * MIB
    build_seconds: int = 600
    cores: float = 1.0  # with cpu_weight: the most cores its processes use at once together (0: any)
    cpu_weight: int = 0  # the CPU weight of all the runner's bots, in percent of the default (0: not bounded)

    def describe(self, per_bot: bool = False) -> str:
        memory = (
            f"{self.memory_bytes // MIB} MiB of memory and {self.processes} processes for the whole bot"
            if per_bot
            else f"{self.memory_bytes // MIB} MiB address space and {self.processes} processes per process"
        )
        return (
            f"{self.cpu_seconds} CPU s, {memory}, {self.open_files} open files, {self.file_bytes // MIB} "
            f"MiB files, {self.tmp_bytes // MIB} MiB /tmp, {self.log_bytes // 1024} KiB of output"
            + (
                f", {self.cores:g} cores at most and a CPU weight of {self.cpu_weight}% for the bots together"
                if self.cpu_weight > 0
                else ""
            )
        )


def interpreter_paths() -> list[str]:
    """The runner's Python: its prefixes (the interpreter and its standard library) and the folders of
    installed libraries on its path. Not ``PYTHONPATH`` nor a checkout: the ``kutnahora`` package is
    bound on its own (:func:`package_view`)."""
    paths = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sys.path if p and os.path.isdir(p) and os.path.basename(p) in LIBRARY_FOLDERS)
    return sorted(p for p in paths if os.path.isdir(p))


LIBRARY_FOLDERS = ("site-packages", "dist-packages")

SUBPACKAGES = (
    "v1",
    "engine",
    "native",
    "wire",
    "learned",
    "clients",
    "envs",
    "server",
    "plumbing",
    "arena",
    "hosting",
    "worker",
    "bench",
    "web",
)
"""The subpackages of ``kutnahora``, each bound where the bot's ``PYTHONPATH`` finds it (every one that
pyproject.toml maps to a folder, and ``v1``; a test keeps the two lists equal)."""


def package_view() -> list[tuple[str, str]]:
    """(where it lies, where the bot sees it) for each file and folder of the installed ``kutnahora``
    package, resolved through links (an editable install or a development layout points into a
    checkout: only the package's own folders are bound, not the checkout around them)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return []
    view: dict[str, str] = {}
    for location in spec.submodule_search_locations:
        for entry in sorted(os.listdir(location)):
            if entry == "__pycache__" or entry in view:
                continue
            source = os.path.realpath(os.path.join(location, entry))
            if os.path.isdir(source) or os.path.isfile(source):
                view[entry] = source
    # An editable install maps the subpackages to folders of their own (engine/, clients/, ...), which an
    # import finder knows and the package's folder does not hold.
    for name in SUBPACKAGES:
        if name in view:
            continue
        found = importlib.util.find_spec(f"{PACKAGE}.{name}")
        if found is not None and found.submodule_search_locations:
            view[name] = os.path.realpath(next(iter(found.submodule_search_locations)))
    shown = [(source, f"{PACKAGE_INSIDE}/{PACKAGE}/{entry}") for entry, source in view.items()]
    # The compiled build's shared runtime (kutnahora__mypyc.*.so) lies beside the package, not in it.
    for location in spec.submodule_search_locations:
        beside = os.path.dirname(os.path.realpath(location))
        for entry in sorted(os.listdir(beside)):
            source = os.path.join(beside, entry)
            if entry.startswith(f"{PACKAGE}__mypyc") and os.path.isfile(source):
                shown.append((source, f"{PACKAGE_INSIDE}/{entry}"))
    return shown


def python_paths() -> list[str]:
    """Every host folder a walled-in Python bot is shown: the interpreter's and the package's."""
    return sorted({*interpreter_paths(), *(source for source, _ in package_view())})


def bot_env() -> dict[str, str]:
    """The environment a walled-in bot starts with (before its seat's variables); ``PYTHONPATH`` leads
    to the ``kutnahora`` package bound into the sandbox."""
    env = {"PATH": bot_path(), "HOME": "/tmp", "LANG": "C.UTF-8"}
    if package_view():
        env["PYTHONPATH"] = PACKAGE_INSIDE
    return env


def copy_protos(folder: Path) -> Path:
    """The project's ``.proto`` files (those installed with ``kutnahora.v1``) copied to
    ``folder/kutnahora/v1/``, world-readable, for builds to generate code from; returns ``folder``."""
    spec = importlib.util.find_spec("kutnahora.v1")
    sources = list(spec.submodule_search_locations or []) if spec is not None else []
    target = folder / "kutnahora" / "v1"
    target.mkdir(parents=True, exist_ok=True)
    for source in sources:
        for proto in sorted(Path(source).glob("*.proto")):
            shutil.copyfile(proto, target / proto.name)
            os.chmod(target / proto.name, 0o644)
    for path in (folder, folder / "kutnahora", target):
        os.chmod(path, 0o755)
    return folder


def bot_path() -> str:
    """The ``PATH`` a bot gets: the runner's Python first, then the system's."""
    return f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin"


@dataclass(slots=True)
class Sandbox:
    """Builds the command line that runs one bot walled in."""

    limits: Limits = field(default_factory=Limits)
    uid_base: int = 61000
    system: Sequence[str] = ("/usr", "/etc", "/opt")
    extra: Sequence[str] = field(default_factory=interpreter_paths)
    bwrap: str = "bwrap"
    protos: Path | None = None  # bound read-only at PROTOS_INSIDE (see copy_protos)
    package: Sequence[tuple[str, str]] = field(default_factory=package_view)
    cgroups: Cgroups = field(default_factory=lambda: Cgroups("prlimit"))
    leases: UidLeases | None = None  # None: user ids are not leased (a runner that is not root)
    staged: Path | None = None  # the run's tmpfs (see stage), while it is mounted

    @property
    def as_root(self) -> bool:
        return os.geteuid() == 0

    def setup(self, runtime: Path | None = None) -> None:
        """Check the walls, then find the per-bot limits this machine allows and lease user ids from
        ``runtime`` (when root); a clear :class:`SandboxError` when something is missing."""
        if self.as_root:
            self.leases = UidLeases(self.uid_base, folder=runtime)
            try:
                self.leases.prepare()
            except LeaseError as error:
                raise SandboxError(str(error)) from None
        self.check()
        self.cgroups = cgroups_detect(self.limits.cpu_weight)

    def close(self) -> None:
        """Remove the control groups made for the bots (their processes are killed), and the run's tmpfs."""
        self.cgroups.close()
        staged, self.staged = self.staged, None
        if staged is not None:
            subprocess.run(["umount", "-l", str(staged)], capture_output=True, check=False)

    def stage(self, work: Path) -> Path:
        """Where the run's submissions are to be copied: when root, a tmpfs mounted at ``work/.walls`` for
        the run, holding a copy of the package (bound from there from now on); else ``work`` itself (the
        bind mounts then name their host paths in ``/proc/self/mountinfo``)."""
        if not self.as_root or self.staged is not None:
            return self.staged or work
        folder = work / ".walls"  # no submission name starts with a dot
        folder.mkdir(exist_ok=True)
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "mode=0711,nosuid,nodev", "kutnahora-walls", str(folder)],
            capture_output=True,
            check=False,
        )
        if mounted.returncode != 0:
            return work
        self.staged = folder
        package: list[tuple[str, str]] = []
        for source, target in self.package:
            copy = folder / "python" / Path(target).relative_to(PACKAGE_INSIDE)
            copy.parent.mkdir(parents=True, exist_ok=True)
            if os.path.isdir(source):
                shutil.copytree(source, copy, symlinks=False, ignore=shutil.ignore_patterns("node_modules"))
            else:
                shutil.copyfile(source, copy)
            package.append((str(copy), target))
        _readable(folder / "python")
        self.package = package
        return folder

    def describe(self) -> str:
        """What holds the bots, for the runner's first lines and the results file."""
        return f"limits: {self.limits.describe(self.cgroups.in_force)}; {self.cgroups.describe()}"

    def lease(self) -> Lease | None:
        """A user id for one bot run, held until released (None when the runner is not root)."""
        if self.leases is None:
            return None
        try:
            return self.leases.acquire()
        except LeaseError as error:
            raise SandboxError(str(error)) from None

    def group(self) -> BotGroup | None:
        """A control group for one bot run (None where cgroups are not in force)."""
        return self.cgroups.create(self.limits.memory_bytes, self.limits.processes, self.limits.cores)

    def check(self) -> None:
        """Fail with a clear :class:`SandboxError` when bubblewrap is missing or cannot make its walls."""
        found = shutil.which(self.bwrap)
        if found is None:
            raise SandboxError(
                "bubblewrap (bwrap) is not installed; install it (Debian: apt-get install bubblewrap) or "
                "run the bots unwalled with --sandbox none"
            )
        self.bwrap = found
        lease = self.lease()  # the probe's user is leased too: it is never another bot's
        try:
            probe = [*self._walls(None, writable=False), "--", "true"]
            if self.as_root:
                uid = lease.uid if lease is not None else self.uid_base
                probe = [*self._walls(None, writable=False), "--", "setpriv", *self._drop(uid), "true"]
            result = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
        finally:
            if lease is not None:
                lease.release()
        if result.returncode != 0:
            detail = result.stderr.strip().splitlines()
            hint = "" if self.as_root else " (are unprivileged user namespaces enabled? see sysctl "
            hint += "" if self.as_root else "kernel.unprivileged_userns_clone / user.max_user_namespaces)"
            raise SandboxError(
                "bubblewrap cannot build the sandbox on this machine"
                + (f": {detail[-1]}" if detail else "")
                + hint
                + "; --sandbox none runs the bots unwalled"
            )

    def command(
        self,
        folder: Path,
        run: str,
        env: dict[str, str],
        *,
        uid: int | None,
        socket: Path | None,
        writable: bool = False,
        cpu_seconds: int | None = None,
        group: BotGroup | None = None,
    ) -> list[str]:
        """The command that runs the shell command ``run`` in ``folder`` (at ``/bot``) walled in, as
        ``uid`` (when root), in the control group ``group`` (when cgroups are in force)."""
        limits = self.limits
        command = [*self._walls(folder, writable=writable)]
        if socket is not None:
            command += ["--bind", str(socket), SOCKET_INSIDE]
        command += ["--chdir", FOLDER_INSIDE, "--clearenv"]
        if self.protos is not None:
            env = {**env, ENV_PROTOS: PROTOS_INSIDE}
        for key, value in sorted(env.items()):
            command += ["--setenv", key, value]
        seconds = cpu_seconds or limits.cpu_seconds
        command += ["--", "prlimit", f"--cpu={seconds}:{seconds + 1}"]
        if group is None:
            command.append(f"--as={limits.memory_bytes}")
        command += [
            f"--nproc={limits.processes}",
            f"--nofile={limits.open_files}",
            f"--fsize={limits.file_bytes}",
            "--core=0",
            "--",
        ]
        if self.as_root and uid is not None:
            command += ["setpriv", *self._drop(uid)]
        command += ["/bin/sh", "-c", run]
        if group is not None:  # join the group first: every process of the bot is then counted
            command = ["/bin/sh", "-c", f'{group.enter()} && exec "$@"', "kutnahora-join", *command]
        return command

    def _drop(self, uid: int) -> list[str]:
        return [f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]

    def _walls(self, folder: Path | None, *, writable: bool) -> list[str]:
        walls = [self.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        walls += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "bot"]
        if not self.as_root:
            walls.append("--unshare-user")
        binds: list[str] = []
        inside = [p for p in self.extra if not any(_under(p, s) for s in self.system)]
        for path in [*self.system, *inside]:
            if os.path.isdir(path):
                binds += ["--ro-bind", path, path]
        for link in ("/bin", "/lib", "/lib64", "/sbin", "/lib32"):
            if os.path.islink(link):
                walls += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                binds += ["--ro-bind", link, link]
        for source, target in self.package:
            binds += ["--ro-bind", source, target]
        # /tmp first, so that folders bound below it (a Python found under /tmp) stay visible on top.
        walls += ["--perms", "1777", "--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp"]
        package_parents = [f"{PACKAGE_INSIDE}/{PACKAGE}/-"] if self.package else []
        walls += _parents(
            [*self.system, *inside, SOCKET_INSIDE, PROTOS_INSIDE, FOLDER_INSIDE, *package_parents]
        )
        walls += binds
        if self.protos is not None:
            walls += ["--ro-bind", str(self.protos), PROTOS_INSIDE]
        walls += ["--proc", "/proc", "--dev", "/dev"]
        if folder is not None:
            walls += ["--bind" if writable else "--ro-bind", str(folder), FOLDER_INSIDE]
        return walls


def _readable(folder: Path) -> None:
    """Every file under ``folder`` readable by any user, every folder listable (the bots' users read the
    copied package)."""
    for root, _dirs, files in os.walk(folder):
        os.chmod(root, 0o755)
        for name in files:
            path = os.path.join(root, name)
            os.chmod(path, 0o755 if os.stat(path).st_mode & 0o111 else 0o644)


def cgroups_detect(cpu_weight: int = 0) -> Cgroups:
    """The per-bot limits this machine allows (root's cgroups; :func:`cgroups.detect`)."""
    return detect(cpu_weight=cpu_weight)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _parents(paths: Iterable[str]) -> list[str]:
    """``--dir`` for every folder above the mount points, world-readable (bubblewrap would otherwise copy
    the host's modes, and ``/root`` is private)."""
    seen: list[str] = []
    for path in paths:
        parent = Path(path).parent
        chain = [p for p in reversed(parent.parents) if str(p) != "/"] + [parent]
        for folder in chain:
            name = str(folder)
            if name != "/" and name not in seen:
                seen.append(name)
    command: list[str] = []
    for name in seen:
        command += ["--perms", "0755", "--dir", name]
    return command
