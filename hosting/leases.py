"""Sandbox user ids leased, so that no two bots (of one runner or of several on one host) share one.

Each user id of the range ``base`` … ``base + count - 1`` has a lock file in a runtime folder
(``/run/kutnahora-sandbox`` by default, ``--sandbox-runtime`` or ``KUTNAHORA_SANDBOX_RUNTIME``). A runner
takes a user id by holding an exclusive ``flock`` on its file for as long as the bot runs, and lets it go
when the bot has ended. The kernel drops the lock when the runner's process dies however it dies, so a
user id of a runner that was killed is free again at once, with nothing to clean up.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_RUNTIME = Path("/run/kutnahora-sandbox")
ENV_RUNTIME = "KUTNAHORA_SANDBOX_RUNTIME"
DEFAULT_COUNT = 1000


class LeaseError(Exception):
    """No user id can be leased; the message says why."""


@dataclass(slots=True)
class Lease:
    """One user id, held until :meth:`release`."""

    uid: int
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the file drops its flock
            self.fd = -1

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class UidLeases:
    """Hands out the user ids ``base`` … ``base + count - 1``, each to one holder on the whole host."""

    def __init__(self, base: int, count: int = DEFAULT_COUNT, folder: Path | None = None) -> None:
        self.base = base
        self.count = count
        self.folder = folder or Path(os.environ.get(ENV_RUNTIME) or DEFAULT_RUNTIME)
        self._next = 0

    def prepare(self) -> None:
        """Make the runtime folder (private to the runner's user); :class:`LeaseError` if it cannot be."""
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if self.folder.is_symlink() or not self.folder.is_dir():
                raise LeaseError(f"the sandbox runtime folder {self.folder} is not a folder")
        except OSError as error:
            raise LeaseError(
                f"cannot make the sandbox runtime folder {self.folder}: {error.strerror} "
                f"(choose another with --sandbox-runtime or {ENV_RUNTIME})"
            ) from None

    def acquire(self) -> Lease:
        """A user id no other bot on this host holds now; :class:`LeaseError` when all are taken."""
        for step in range(self.count):
            index = (self._next + step) % self.count
            uid = self.base + index
            fd = os.open(
                self.folder / f"uid-{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            except BaseException:
                os.close(fd)
                raise
            self._next = index + 1
            return Lease(uid, fd)
        raise LeaseError(
            f"all {self.count} sandbox user ids ({self.base} to {self.base + self.count - 1}) are held by "
            "running bots"
        )

    def holders(self) -> list[int]:
        """The user ids some process holds now (for tests and diagnostics)."""
        held: list[int] = []
        for index in range(self.count):
            path = self.folder / f"uid-{self.base + index}.lock"
            if not path.exists():
                continue
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(self.base + index)
            finally:
                with contextlib.suppress(OSError):
                    os.close(fd)
        return held
