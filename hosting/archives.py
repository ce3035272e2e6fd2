"""A submission folder as one archive, and back: what an author uploads and what a worker unpacks.

An author's folder is packed (:func:`pack`) as a gzip'd tar of its regular files, folders and links, in a
fixed order with fixed owners and times, so the same folder always gives the same bytes and the same
digest (the arena keeps each version by that digest: submitting the same code twice is one version). A
link is kept as a link (a Node.js package's ``node_modules/.bin``), and only one that stays inside the
folder: links out of it, hard links, devices and FIFOs are refused by
:func:`kutnahora.hosting.submission_files.check_tree` before anything is read; files are read without
following links.

An archive is a stranger's bytes. :func:`unpack` takes at most ``ARCHIVE_CAP`` bytes, reads the members'
headers first and refuses, naming the member, anything but regular files, folders and relative links that
stay inside the folder, absolute paths and ``..``, more than ``MEMBER_CAP`` members and more than
``UNPACKED_CAP`` bytes unpacked, before a byte is written. A link is followed as the kernel will follow it,
through the archive's other links whatever their order (tarfile's filter resolves a link against the disk
as it is when that link is extracted, so ``x -> d/..`` before ``d -> .`` passed it and led out); a member
under a link, or with a link's name, is refused, so that each link lies where its name says. Then it
extracts with tarfile's ``data`` filter (no link out, no special files, no modes beyond the user's,
nothing outside the target). Every refusal is an :class:`ArchiveError` saying what was wrong.

A built folder (what a version's build left in its folder) is packed and unpacked the same way, but
streamed through a file (:func:`pack_file`, :func:`unpack_file`) and within larger caps
(:data:`BUILT_CAPS`): it may hold a compiler's output of hundreds of MiB, which is never held in memory
whole.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from kutnahora.hosting.submission_files import LinkError, check_tree

ARCHIVE_CAP = 4 << 20  # bytes of a packed submission
UNPACKED_CAP = 64 << 20  # bytes of its files unpacked
MEMBER_CAP = 2000  # files and folders in it
MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class Caps:
    """What an archive may be: its packed bytes, its files' bytes unpacked, its members."""

    archive_bytes: int
    unpacked_bytes: int
    members: int


SOURCE_CAPS = Caps(ARCHIVE_CAP, UNPACKED_CAP, MEMBER_CAP)
"""A submission as its author uploads it."""
BUILT_CAPS = Caps(1 << 30, 2 << 30, 50_000)
"""A built folder as a worker uploads or fetches it (the arena bounds it further: ``--built-max-bytes``)."""


class ArchiveError(Exception):
    """An archive (or a folder to pack) that cannot be taken; the message says why."""


def digest(archive: bytes) -> str:
    """The archive's SHA-256 in hex: the name its version is kept by."""
    return hashlib.sha256(archive).hexdigest()


def pack(folder: Path) -> bytes:
    """``folder``'s files and folders as a gzip'd tar, the same bytes for the same content;
    :class:`ArchiveError` for a link out of it, a special file, or a result over the caps."""
    paths = _listed(folder, SOURCE_CAPS)
    raw = io.BytesIO()
    _write_tar(folder, paths, raw)
    packed = gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)
    if len(packed) > ARCHIVE_CAP:
        raise ArchiveError(
            f"{folder} packs to {len(packed) / MIB:.1f} MiB; at most {ARCHIVE_CAP // MIB} MiB are taken "
            "(leave build outputs and data out of the folder)"
        )
    return packed


def pack_file(folder: Path, out: BinaryIO, caps: Caps = BUILT_CAPS) -> tuple[str, int]:
    """Write ``folder`` packed as :func:`pack` packs it (in a fixed order, with fixed owners and times:
    the same content gives the same bytes) to ``out``, streamed; its SHA-256 and size.
    :class:`ArchiveError` for a link out of it, a special file, or more than ``caps``."""
    paths = _listed(folder, caps)
    hashed = _Hashed(out)
    with gzip.GzipFile(filename="", mode="wb", fileobj=hashed, compresslevel=6, mtime=0) as stream:
        _write_tar(folder, paths, stream)
    if hashed.size > caps.archive_bytes:
        raise ArchiveError(
            f"{folder} packs to {hashed.size / MIB:.1f} MiB; "
            f"at most {caps.archive_bytes // MIB} MiB are taken"
        )
    return hashed.sha.hexdigest(), hashed.size


class _Hashed:
    """A file written through, its bytes counted and hashed."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        self.size += len(data)
        return self.out.write(data)

    def flush(self) -> None:
        self.out.flush()


def _listed(folder: Path, caps: Caps) -> list[Path]:
    """``folder``'s members (links kept, not walled), checked, within ``caps``."""
    if not folder.is_dir():
        raise ArchiveError(f"{folder} is not a folder")
    try:
        check_tree(folder, str(folder))
    except LinkError as error:
        raise ArchiveError(str(error)) from None
    paths: list[Path] = []
    total = 0
    for current, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        base = Path(current)
        for name in [*dirs, *sorted(files)]:
            path = base / name
            paths.append(path)
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        dirs[:] = [name for name in dirs if not (base / name).is_symlink()]  # a link is kept, not walked
        if len(paths) > caps.members:
            break
    if len(paths) > caps.members:
        raise ArchiveError(
            f"{folder} holds more than {caps.members} files and folders; at most {caps.members} are taken"
        )
    if total > caps.unpacked_bytes:
        raise ArchiveError(
            f"{folder} holds {total / MIB:.1f} MiB of files; "
            f"at most {caps.unpacked_bytes // MIB} MiB are taken"
        )
    return sorted(paths, key=lambda p: p.relative_to(folder).as_posix())


def _write_tar(folder: Path, paths: list[Path], out: BinaryIO | gzip.GzipFile) -> None:
    """The members as a tar of fixed owners, times and modes (a file read without following links)."""
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in paths:
            info = tarfile.TarInfo(path.relative_to(folder).as_posix())
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_symlink():
                info.type = tarfile.SYMTYPE
                info.linkname = os.readlink(path)
                info.mode = 0o777
                tar.addfile(info)
            elif path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as source:
                    info.size = os.fstat(source.fileno()).st_size
                    info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
                    tar.addfile(info, source)


def unpack(archive: bytes, target: Path) -> None:
    """Check ``archive`` and extract it into the empty or new folder ``target``; :class:`ArchiveError`
    (and nothing written) when it is not a gzip'd tar of plain files and folders within the caps."""
    if len(archive) > ARCHIVE_CAP:
        raise ArchiveError(f"the archive is {len(archive) / MIB:.1f} MiB; at most {ARCHIVE_CAP // MIB} MiB")
    try:
        raw = _gunzip(archive)
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            members = tar.getmembers()
            _check_members(members)
            target.mkdir(parents=True, exist_ok=True)
            if any(target.iterdir()):
                raise ArchiveError(f"{target} is not empty")
            tar.extractall(target, filter="data")
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:
        raise ArchiveError(f"the archive is not a readable gzip'd tar: {error}") from None


def unpack_file(archive: Path, target: Path, caps: Caps = BUILT_CAPS) -> None:
    """Check the gzip'd tar in the file ``archive`` and extract it into the empty or new folder ``target``,
    streamed: its members' headers are read first (refused as :func:`unpack` refuses them, within
    ``caps``), then it is extracted with tarfile's ``data`` filter. :class:`ArchiveError` (and ``target``
    left empty) otherwise."""
    size = archive.stat().st_size
    if size > caps.archive_bytes:
        raise ArchiveError(f"the archive is {size / MIB:.1f} MiB; at most {caps.archive_bytes // MIB} MiB")
    target.mkdir(parents=True, exist_ok=True)
    if any(target.iterdir()):
        raise ArchiveError(f"{target} is not empty")
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members: list[tarfile.TarInfo] = []
            for member in tar:
                members.append(member)
                if len(members) > caps.members:
                    break
            _check_members(members, caps)
            tar.extractall(target, members=members, filter="data")
    except (ArchiveError, tarfile.TarError, EOFError, OSError, zlib.error) as error:
        for entry in list(target.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        if isinstance(error, ArchiveError):
            raise
        raise ArchiveError(f"the archive is not a readable gzip'd tar: {error}") from None


def _gunzip(archive: bytes) -> bytes:
    """The tar inside, refused once it grows past what the caps allow (a small bomb stays small)."""
    limit = UNPACKED_CAP + (MEMBER_CAP + 2) * 1024 + 2 * MIB  # the files, their headers, the tar's end
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(archive)) as stream:
            raw = stream.read(limit + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise ArchiveError(f"the archive is not gzip'd: {error}") from None
    if len(raw) > limit:
        raise ArchiveError(f"the archive unpacks to more than {UNPACKED_CAP // MIB} MiB")
    return raw


def _check_members(members: list[tarfile.TarInfo], caps: Caps = SOURCE_CAPS) -> None:
    if len(members) > caps.members:
        raise ArchiveError(f"the archive holds more than {caps.members} members; at most {caps.members}")
    total = 0
    links: dict[tuple[str, ...], tuple[str, ...]] = {}  # each link's path and its target's parts
    seen: dict[tuple[str, ...], None] = {}  # every member's path, in the archive's order
    for member in members:
        name = member.name
        parts = PurePosixPath(name).parts
        if not parts and member.isdir():
            continue  # "." itself, as `tar -czf bot.tar.gz -C my-bot .` writes it
        if name.startswith("/") or ".." in parts or not parts:
            raise ArchiveError(f"the archive's member {name[:200]!r} lies outside its folder")
        if member.issym():
            target = PurePosixPath(member.linkname)
            if target.is_absolute():
                raise ArchiveError(_LINK_OUT.format(name=name[:200]))
            if parts in seen:
                raise ArchiveError(_IN_PLACE.format(name=name[:200]))
            links[parts] = target.parts
        elif not (member.isreg() or member.isdir()):
            raise ArchiveError(
                f"the archive's member {name[:200]!r} is a hard link or a special file; only files, folders "
                "and links inside the folder"
            )
        elif parts in links:
            raise ArchiveError(_IN_PLACE.format(name=name[:200]))
        seen[parts] = None
        total += member.size
        if total > caps.unpacked_bytes:
            raise ArchiveError(f"the archive unpacks to more than {caps.unpacked_bytes // MIB} MiB")
    # A member under a link would be written wherever the link leads, and a link there would be found
    # at a path no member names; so none lies under one, and each link lies where its name says.
    for parts in seen:
        for depth in range(1, len(parts)):
            if parts[:depth] in links:
                name = "/".join(parts)[:200]
                raise ArchiveError(f"the archive's member {name!r} lies under a link; links are not folders")
    for place, leads in links.items():
        if _leaves(place[:-1] + leads, links):
            raise ArchiveError(_LINK_OUT.format(name="/".join(place)[:200]))


_LINK_OUT = (
    "the archive's member {name!r} is a link out of its folder (or in a loop of links); links may only "
    "point inside it"
)
_IN_PLACE = "the archive's member {name!r} and a link have the same name; a link takes no other's place"
LINK_HOPS = 40
"""The most links followed in resolving one path, as Linux's own bound (more: refused as a loop)."""


def _leaves(path: tuple[str, ...], links: dict[tuple[str, ...], tuple[str, ...]]) -> bool:
    """Whether ``path`` (parts from the archive's folder) resolves outside the folder, or loops, once
    unpacked: followed part by part as the kernel resolves it, through the archive's own links (each
    resolved where it lies, whatever order the archive gives them in: a link checked alone by its words,
    ``x -> d/..``, may climb out through another, ``d -> .``)."""
    pending = list(path)
    resolved: list[str] = []
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return True
            resolved.pop()
            continue
        resolved.append(part)
        target = links.get(tuple(resolved))
        if target is not None:
            hops += 1
            if hops > LINK_HOPS:
                return True
            resolved.pop()
            pending[:0] = target
    return False
