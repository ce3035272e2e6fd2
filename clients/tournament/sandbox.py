"""The walls around a hosted bot: bubblewrap namespaces, resource limits and an unprivileged user.

Each bot process runs as ``bwrap`` … ``prlimit`` … ``setpriv`` … ``sh -c RUN``:

* bubblewrap (Debian's ``bubblewrap``) gives it a root of its own: the system folders (``/usr``, ``/etc``,
  the runner's Python) read-only, its own submission folder read-only at ``/bot`` (writable only while it
  is built), a private ``/tmp`` of ``tmp_bytes``, fresh ``/proc`` and ``/dev``, its own PID, IPC, UTS and
  network namespaces (no network at all: the only way out is the game server's Unix socket, bound in at
  ``/run/kutnahora/server.sock``), and no other submission's files; the project's ``.proto`` files
  read-only at ``/run/kutnahora/protos`` (``KUTNAHORA_PROTOS``), so that a build can generate its code
  without the network;
* ``prlimit`` sets CPU seconds, address space, processes, open files and file size;
* ``setpriv`` drops to a user id of its own (``uid_base`` + a slot number, one per running bot), so
  that the process limit counts that bot's processes only (root is exempt from it) and the runner's
  files, the server's database and the other bots are out of its reach.

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

SOCKET_INSIDE = "/run/kutnahora/server.sock"
PROTOS_INSIDE = "/run/kutnahora/protos"
FOLDER_INSIDE = "/bot"
ENV_PROTOS = "KUTNAHORA_PROTOS"
PACKAGES = ("kutnahora", "kutnahora.clients", "kutnahora.engine", "kutnahora.server", "kutnahora.wire")
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

    def describe(self) -> str:
        return (
            f"{self.cpu_seconds} CPU s, {self.memory_bytes // MIB} MiB address space, "
            f"{self.processes} processes, {self.open_files} open files, {self.file_bytes // MIB} MiB "
            f"files, {self.tmp_bytes // MIB} MiB /tmp, {self.log_bytes // 1024} KiB of output"
        )


def python_paths() -> list[str]:
    """The runner's Python: its prefixes and site folders, and where the kutnahora packages live."""
    paths = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p)
    paths.update(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            paths.update(spec.submodule_search_locations)
    return sorted(p for p in paths if os.path.isdir(p))


def bot_env() -> dict[str, str]:
    """The environment a walled-in bot starts with (before its seat's variables): the runner's
    ``PYTHONPATH`` too, when it has one, so that a Python bot imports the same ``kutnahora``."""
    env = {"PATH": bot_path(), "HOME": "/tmp", "LANG": "C.UTF-8"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
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
    extra: Sequence[str] = field(default_factory=python_paths)
    bwrap: str = "bwrap"
    protos: Path | None = None  # bound read-only at PROTOS_INSIDE (see copy_protos)

    @property
    def as_root(self) -> bool:
        return os.geteuid() == 0

    def check(self) -> None:
        """Fail with a clear :class:`SandboxError` when bubblewrap is missing or cannot make its walls."""
        found = shutil.which(self.bwrap)
        if found is None:
            raise SandboxError(
                "bubblewrap (bwrap) is not installed; install it (Debian: apt-get install bubblewrap) or "
                "run the bots unwalled with --sandbox none"
            )
        self.bwrap = found
        probe = [*self._walls(None, writable=False), "--", "true"]
        if self.as_root:
            probe = [*self._walls(None, writable=False), "--", "setpriv", *self._drop(self.uid_base), "true"]
        result = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
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
        slot: int,
        socket: Path | None,
        writable: bool = False,
        cpu_seconds: int | None = None,
    ) -> list[str]:
        """The command that runs the shell command ``run`` in ``folder`` (at ``/bot``) walled in."""
        limits = self.limits
        command = [*self._walls(folder, writable=writable)]
        if socket is not None:
            command += ["--bind", str(socket), SOCKET_INSIDE]
        command += ["--chdir", FOLDER_INSIDE, "--clearenv"]
        if self.protos is not None:
            env = {**env, ENV_PROTOS: PROTOS_INSIDE}
        for key, value in sorted(env.items()):
            command += ["--setenv", key, value]
        command += [
            "--",
            "prlimit",
            f"--cpu={cpu_seconds or limits.cpu_seconds}:{(cpu_seconds or limits.cpu_seconds) + 1}",
            f"--as={limits.memory_bytes}",
            f"--nproc={limits.processes}",
            f"--nofile={limits.open_files}",
            f"--fsize={limits.file_bytes}",
            "--core=0",
            "--",
        ]
        if self.as_root:
            command += ["setpriv", *self._drop(self.uid_base + slot)]
        return [*command, "/bin/sh", "-c", run]

    def owner(self, slot: int) -> int | None:
        """The user id a bot in ``slot`` runs as (None when the runner is not root: its own)."""
        return self.uid_base + slot if self.as_root else None

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
        # /tmp first, so that folders bound below it (a Python found under /tmp) stay visible on top.
        walls += ["--perms", "1777", "--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp"]
        walls += _parents([*self.system, *inside, SOCKET_INSIDE, PROTOS_INSIDE, FOLDER_INSIDE])
        walls += binds
        if self.protos is not None:
            walls += ["--ro-bind", str(self.protos), PROTOS_INSIDE]
        walls += ["--proc", "/proc", "--dev", "/dev"]
        if folder is not None:
            walls += ["--bind" if writable else "--ro-bind", str(folder), FOLDER_INSIDE]
        return walls


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
