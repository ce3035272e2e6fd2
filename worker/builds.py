"""Hosted versions on this worker: each archive fetched once by its digest, each built once.

:class:`Builder` keeps the archives it fetched in ``WORK/archives`` (named by digest, checked against it)
and the versions it built in the sandbox's room (the tmpfs of :meth:`Sandbox.stage` when the worker is
root), one folder per digest, so that a build job and the host jobs of the same version share one build
(:func:`kutnahora.hosting.builds.prepare`: copied, built walled in, its run command's program looked for
inside the sandbox). What became of a build (:class:`Built`: ready, or failed with one sentence and the
log's tail) is kept for the worker's life; the built folders of versions no job uses are removed once more
than ``keep`` are kept.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kutnahora.hosting import builds
from kutnahora.hosting.archives import ArchiveError, digest, unpack
from kutnahora.hosting.sandbox import Sandbox, copy_protos
from kutnahora.hosting.submission import Submission, SubmissionError, load
from kutnahora.worker.hosting_client import HostingClient

BUILD_LOG_TAIL = 256 << 10  # bytes of a build's log sent to the arena (its end)


@dataclass(frozen=True, slots=True)
class Built:
    """A version built on this worker: ready to play (``submission``), or failed with ``reason``."""

    digest: str
    submission: Submission | None
    reason: str
    log: bytes

    @property
    def ok(self) -> bool:
        return self.submission is not None


class Builder:
    """Fetches and builds hosted versions, once per digest."""

    def __init__(
        self, client: HostingClient, work: Path, sandbox: Sandbox | None, log: Any, keep: int = 16
    ) -> None:
        self.client = client
        self.work = work
        self.sandbox = sandbox
        self.log = log
        self.keep = keep
        self.archives = work / "archives"
        self.room = work  # where the built copies lie (the sandbox's tmpfs once staged)
        self.protos: Path | None = None
        self._built: dict[str, Built] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def setup(self) -> Path:
        """Prepare the room: the sandbox's tmpfs (when root) and the ``.proto`` files for builds; returns
        the room (the seat gateways' sockets go there too)."""
        for folder in (self.work, self.archives, self.work / "unpacked", self.work / "build-logs"):
            folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.work, 0o711)
        if self.sandbox is not None:
            self.room = self.sandbox.stage(self.work)
        self.protos = copy_protos(self.room / ".protos")  # no submission name starts with a dot
        if self.sandbox is not None:
            self.sandbox.protos = self.protos
        return self.room

    async def fetch(self, wanted: str) -> bytes:
        """The archive ``wanted`` (its SHA-256), from the cache or the arena (then kept)."""
        path = self.archives / f"{wanted}.tar.gz"
        if path.is_file():
            cached = path.read_bytes()
            if digest(cached) == wanted:
                return cached
            path.unlink()
        archive = await self.client.archive(wanted)
        if digest(archive) != wanted:
            raise ArchiveError(f"the arena's archive for {wanted[:12]} does not match that digest")
        partial = path.with_suffix(".part")
        partial.write_bytes(archive)
        partial.replace(path)
        return archive

    def use(self, wanted: str) -> None:
        """A job plays this version: its built folder is kept while it does."""
        self._users[wanted] = self._users.get(wanted, 0) + 1

    def done_with(self, wanted: str) -> None:
        """A job no longer plays this version."""
        self._users[wanted] = max(0, self._users.get(wanted, 0) - 1)
        self._prune()

    async def build(self, wanted: str) -> Built:
        """The version ``wanted`` built (once per worker; later calls return the first result). Raises
        the SDK's ClientError when its archive cannot be fetched."""
        lock = self._locks.setdefault(wanted, asyncio.Lock())
        async with lock:
            if wanted in self._built:
                return self._built[wanted]
            archive = await self.fetch(wanted)
            built = await self._build(wanted, archive)
            self._built[wanted] = built
            self.log.info(
                "built" if built.ok else "build failed", digest=wanted[:12], reason=built.reason or None
            )
            self._prune()
            return built

    async def _build(self, wanted: str, archive: bytes) -> Built:
        unpacked = self.work / "unpacked" / wanted
        if unpacked.exists():
            shutil.rmtree(unpacked)
        try:
            try:
                unpack(archive, unpacked)
            except ArchiveError as error:
                return Built(wanted, None, f"the archive cannot be unpacked: {error}", b"")
            try:
                submission = load(unpacked)
            except SubmissionError as error:
                return Built(wanted, None, _hide(str(error), unpacked, "the submission"), b"")
            logs = self.work / "build-logs" / wanted
            entry = builds.Entry(submission.name, unpacked, submission, None)
            prepared = await builds.prepare(entry, self._folder(wanted), self.sandbox, logs, self.protos)
            log_path = logs / f"{submission.name}.build.log"
            log = log_path.read_bytes()[-BUILD_LOG_TAIL:] if log_path.is_file() else b""
            if prepared.submission is None:
                reason = _hide(prepared.broken or "it cannot be played", log_path, "the build log")
                reason = _hide(reason, self._folder(wanted), "the submission")
                shutil.rmtree(self._folder(wanted), ignore_errors=True)
                return Built(wanted, None, reason, log)
            return Built(wanted, prepared.submission, "", log)
        finally:
            shutil.rmtree(unpacked, ignore_errors=True)

    def _folder(self, wanted: str) -> Path:
        return self.room / "builds" / wanted[:24]

    def _prune(self) -> None:
        """Remove the built folders of the oldest versions no job uses, beyond ``keep``."""
        ready = [d for d, b in self._built.items() if b.ok]
        for old in ready[: max(0, len(ready) - self.keep)]:
            if self._users.get(old, 0) == 0 and not self._locks[old].locked():
                del self._built[old]
                shutil.rmtree(self._folder(old), ignore_errors=True)


def _hide(text: str, path: Path, name: str) -> str:
    """``text`` with the worker's path ``path`` named as ``name`` (no host path reaches the author)."""
    return text.replace(str(path), name)
