"""Hosted versions on this worker: each archive fetched once by its digest, each version built once for all
workers.

:class:`Builder` keeps the archives it fetched in ``WORK/archives`` (named by digest, checked against it)
and the versions it has ready in the sandbox's room (the tmpfs of :meth:`Sandbox.stage` when the worker is
root), one folder per digest, so that a build job and the host jobs of the same version share one build.
A version is made ready in one of two ways:

- built here (:func:`kutnahora.hosting.builds.prepare`: copied, built walled in, its run command's program
  looked for inside the sandbox). A build job then uploads the built folder (:meth:`Builder.publish`:
  packed as a gzip'd tar, streamed to the arena in chunks), so that no other worker builds it again;
- adopted: a host job whose lease names the version's built folder (``HostJob.built``) fetches it, checks
  its SHA-256, unpacks it safely (:func:`kutnahora.hosting.archives.unpack_file`) where a build here
  would have left it, and looks for its run command's program inside the sandbox as after a build
  (:func:`kutnahora.hosting.builds.adopt`); its manifest is the submitted archive's, never the built
  folder's. A built folder that does not match its digest, cannot be unpacked or lacks its program is
  refused (said in the log) and the version is built here instead.

Only a walled worker publishes or adopts: the sandbox shows a bot's folder at ``/bot`` on every worker, so
whatever its build wrote into it (CMake's caches, a Go binary, a Java class path, ``node_modules``) names
the same paths everywhere; the system's folders (``/usr``, ``/etc``, ``/opt``) and the worker's Python are
bound at their own paths, so a built folder is adopted only from a worker of the same :func:`platform`.
An unwalled worker (``--sandbox none``) builds in its own work folder, whose path differs from worker to
worker, so it builds every version itself.

What became of a version (:class:`Built`: ready, or failed with one sentence and the log's tail) is kept
for the worker's life. The folders of the oldest versions no job uses are removed once more than
``keep`` are kept, and so are the oldest archives beyond ``keep`` that no job is reading.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import platform as host
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kutnahora.clients.sdk import ClientError, ConnectError
from kutnahora.hosting import builds
from kutnahora.hosting.archives import ArchiveError, digest, pack_file, unpack, unpack_file
from kutnahora.hosting.sandbox import Sandbox, copy_protos
from kutnahora.hosting.submission import Submission, SubmissionError, load
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.worker.hosting_client import HostingClient
from kutnahora.worker.metrics import WorkerMetrics

BUILD_LOG_TAIL = 256 << 10  # bytes of a build's log sent to the arena (its end)
KEEP = 16  # versions (and archives) kept on disk by default


def platform() -> str:
    """What a built folder depends on beyond ``/bot``, as one line: the machine, the system, its C
    library, and the worker's Python (bound into the sandbox at its own path)."""
    try:
        release = host.freedesktop_os_release()
        system = f"{release.get('ID', '?')} {release.get('VERSION_ID', '')}".strip()
    except OSError:
        system = host.system()
    libc, version = host.libc_ver()
    python = f"python {sys.version_info.major}.{sys.version_info.minor} at {sys.prefix}"
    return f"{host.machine()}; {system}; {libc} {version}".strip() + f"; {python}; walled at /bot"


@dataclass(frozen=True, slots=True)
class Built:
    """A version made ready on this worker (``submission``), or failed with ``reason``; ``adopted`` when
    its built folder came from another worker, ``artifact`` the digest of its built folder once uploaded
    or adopted."""

    digest: str
    submission: Submission | None
    reason: str
    log: bytes
    adopted: bool = False
    artifact: str = ""

    @property
    def ok(self) -> bool:
        return self.submission is not None


class Builder:
    """Fetches, builds, publishes and adopts hosted versions, once per digest."""

    def __init__(
        self,
        client: HostingClient,
        work: Path,
        sandbox: Sandbox | None,
        log: Any,
        keep: int = KEEP,
        metrics: WorkerMetrics | None = None,
    ) -> None:
        self.client = client
        self.metrics = metrics
        self.work = work
        self.sandbox = sandbox
        self.log = log
        self.keep = keep
        self.archives = work / "archives"
        self.room = work  # where the built copies lie (the sandbox's tmpfs once staged)
        self.protos: Path | None = None
        self.platform = platform()
        self.builds_run = 0  # versions built on this worker (not adopted)
        self._built: dict[str, Built] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}
        self._reading: set[str] = set()  # archives being fetched or unpacked

    @property
    def shares(self) -> bool:
        """Whether this worker publishes and adopts built folders (a walled one: see the module)."""
        return self.sandbox is not None

    def setup(self) -> Path:
        """Prepare the room: the sandbox's tmpfs (when root) and the ``.proto`` files for builds; returns
        the room (the seat gateways' sockets go there too). Built folders left by an earlier run in the
        same work folder are removed (this run knows nothing of them)."""
        for folder in (self.work, self.archives, self.work / "unpacked", self.work / "build-logs"):
            folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.work, 0o711)
        if self.sandbox is not None:
            self.room = self.sandbox.stage(self.work)
        shutil.rmtree(self.room / "builds", ignore_errors=True)
        for stale in self.archives.glob("*.part"):
            stale.unlink(missing_ok=True)
        self.protos = copy_protos(self.room / ".protos")  # no submission name starts with a dot
        if self.sandbox is not None:
            self.sandbox.protos = self.protos
        self._prune_archives()
        return self.room

    async def fetch(self, wanted: str) -> bytes:
        """The archive ``wanted`` (its SHA-256), from the cache or the arena (then kept)."""
        path = self.archives / f"{wanted}.tar.gz"
        self._reading.add(wanted)
        try:
            if path.is_file():
                cached = path.read_bytes()
                if digest(cached) == wanted:
                    os.utime(path)  # the most recently used are kept
                    return cached
                path.unlink()
            archive = await self.client.archive(wanted)
            if digest(archive) != wanted:
                raise ArchiveError(f"the arena's archive for {wanted[:12]} does not match that digest")
            partial = path.with_suffix(".part")
            partial.write_bytes(archive)
            partial.replace(path)
            return archive
        finally:
            self._reading.discard(wanted)
            self._prune_archives()

    def use(self, wanted: str) -> None:
        """A job plays this version: its built folder is kept while it does."""
        self._users[wanted] = self._users.get(wanted, 0) + 1

    def done_with(self, wanted: str) -> None:
        """A job no longer plays this version."""
        self._users[wanted] = max(0, self._users.get(wanted, 0) - 1)
        self._prune()

    async def build(self, wanted: str, artifact: pb.BuiltArtifact | None = None) -> Built:
        """The version ``wanted`` ready to play: adopted from ``artifact`` (another worker's build) when
        this worker can, else built here; once per worker (later calls return the first result). Raises
        the SDK's ClientError when its archive cannot be fetched."""
        lock = self._locks.setdefault(wanted, asyncio.Lock())
        async with lock:
            if wanted in self._built:
                return self._built[wanted]
            archive = await self.fetch(wanted)
            made = None
            if artifact is not None and artifact.digest:
                made = await self._adopt(wanted, archive, artifact)
            if made is None:
                made = await self._build(wanted, archive)
                self.builds_run += 1
            self._built[wanted] = made
            if self.metrics is not None and made.ok:
                self.metrics.versions.labels("adopted" if made.adopted else "built").inc()
            self.log.info(
                "adopted" if made.adopted else "built" if made.ok else "build failed",
                digest=wanted[:12],
                reason=made.reason or None,
            )
            self._prune()
            return made

    async def publish(self, wanted: str, lease_id: str, most: int) -> str:
        """Upload the built folder of the version ``wanted`` (built here) under its build lease, once; its
        digest, or "" when it is not shared (an unwalled worker, a failed build, a folder past the caps or
        the arena's ``most`` bytes, or one the arena refuses: said in the log, and each worker then builds
        the version itself). Raises the SDK's ConnectError while the arena cannot be reached."""
        made = self._built.get(wanted)
        if made is None or made.submission is None or not self.shares or most <= 0:
            return ""
        if made.artifact:
            return made.artifact
        folder = made.submission.folder
        with tempfile.TemporaryDirectory(dir=self.work) as spool:
            packed = Path(spool) / "built.tar.gz"
            try:
                sha, size = await asyncio.to_thread(_pack, folder, packed)
            except (ArchiveError, OSError) as error:
                self.log.warning("the built folder is not shared", digest=wanted[:12], reason=str(error))
                return ""
            if size > most:
                self.log.warning(
                    "the built folder is not shared: the arena keeps no more than its --built-max-bytes",
                    digest=wanted[:12],
                    bytes=size,
                    most=most,
                )
                return ""
            artifact = pb.BuiltArtifact(digest=sha, size_bytes=size, platform=self.platform)
            try:
                existed = await self.client.put_built(lease_id, artifact, packed)
            except ConnectError:
                raise
            except ClientError as error:
                self.log.warning("the arena refuses the built folder", digest=wanted[:12], error=str(error))
                return ""
        self.log.info(
            "built folder uploaded", digest=wanted[:12], built=sha[:12], bytes=size, existed=existed
        )
        self._built[wanted] = dataclasses.replace(made, artifact=sha)
        return sha

    async def _adopt(self, wanted: str, archive: bytes, artifact: pb.BuiltArtifact) -> Built | None:
        """The version made ready from another worker's built folder, or None (said in the log) when it
        cannot be: then it is built here."""
        log = self.log.bind(digest=wanted[:12], built=artifact.digest[:12])
        if not self.shares or self.sandbox is None:
            return None
        if artifact.platform != self.platform:
            log.info("built on another platform; building it here", platform=artifact.platform)
            return None
        unpacked = self.work / "unpacked" / wanted
        folder: Path | None = None
        try:
            shutil.rmtree(unpacked, ignore_errors=True)
            try:
                await asyncio.to_thread(unpack, archive, unpacked)
                submission = load(unpacked)
            except (ArchiveError, SubmissionError):
                return None  # built here, where the reason is reported
            folder = self._folder(wanted) / submission.name
            with tempfile.TemporaryDirectory(dir=self.work) as spool:
                packed = Path(spool) / "built.tar.gz"
                try:
                    received = await self.client.get_built(artifact, packed)
                except ClientError as error:
                    log.warning("cannot fetch the built folder; building it here", error=str(error))
                    return None
                if received != artifact.digest:
                    log.warning(
                        "the built folder does not match its digest; refused, building it here",
                        received=received[:12] or "a wrong size",
                    )
                    return None
                shutil.rmtree(folder, ignore_errors=True)
                try:
                    await asyncio.to_thread(unpack_file, packed, folder)
                except ArchiveError as error:
                    log.warning("the built folder cannot be unpacked; building it here", error=str(error))
                    return None
            prepared = await builds.adopt(submission, folder, self.sandbox)
            if prepared.submission is None:
                log.warning("the built folder cannot be played; building it here", reason=prepared.broken)
                return None
            folder = None  # kept: it is the version's
            return Built(wanted, prepared.submission, "", b"", adopted=True, artifact=artifact.digest)
        finally:
            shutil.rmtree(unpacked, ignore_errors=True)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

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
            shutil.rmtree(logs, ignore_errors=True)
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
        """Forget the oldest versions no job uses, beyond ``keep`` (removing the folders of those that
        were ready)."""
        known = list(self._built)
        for old in known[: max(0, len(known) - self.keep)]:
            if self._users.get(old, 0) == 0 and not self._locks[old].locked():
                made = self._built.pop(old)
                if made.ok:
                    shutil.rmtree(self._folder(old), ignore_errors=True)

    def _prune_archives(self) -> None:
        """Remove the least recently used archives beyond ``keep``, but for those being read."""
        try:
            kept = sorted(self.archives.glob("*.tar.gz"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return
        for old in kept[self.keep :]:
            if old.name.removesuffix(".tar.gz") not in self._reading:
                old.unlink(missing_ok=True)


def _pack(folder: Path, packed: Path) -> tuple[str, int]:
    with packed.open("wb") as out:
        return pack_file(folder, out)


def _hide(text: str, path: Path, name: str) -> str:
    """``text`` with the worker's path ``path`` named as ``name`` (no host path reaches the author)."""
    return text.replace(str(path), name)
