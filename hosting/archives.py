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
``UNPACKED_CAP`` bytes unpacked, before a byte is written; then it extracts with tarfile's ``data`` filter
(no link out, no special files, no modes beyond the user's, nothing outside the target). Every refusal is
an :class:`ArchiveError` saying what was wrong.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from kutnahora.hosting.submission_files import LinkError, check_tree

ARCHIVE_CAP = 4 << 20  # bytes of a packed submission
UNPACKED_CAP = 64 << 20  # bytes of its files unpacked
MEMBER_CAP = 2000  # files and folders in it
MIB = 1 << 20


class ArchiveError(Exception):
    """An archive (or a folder to pack) that cannot be taken; the message says why."""


def digest(archive: bytes) -> str:
    """The archive's SHA-256 in hex: the name its version is kept by."""
    return hashlib.sha256(archive).hexdigest()


def pack(folder: Path) -> bytes:
    """``folder``'s files and folders as a gzip'd tar, the same bytes for the same content;
    :class:`ArchiveError` for a link out of it, a special file, or a result over the caps."""
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
    if len(paths) > MEMBER_CAP:
        raise ArchiveError(f"{folder} holds {len(paths)} files and folders; at most {MEMBER_CAP} are taken")
    if total > UNPACKED_CAP:
        raise ArchiveError(
            f"{folder} holds {total / MIB:.1f} MiB of files; at most {UNPACKED_CAP // MIB} MiB are taken"
        )
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(paths, key=lambda p: p.relative_to(folder).as_posix()):
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
                data = path.read_bytes()
                info.size = len(data)
                info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
                tar.addfile(info, io.BytesIO(data))
    packed = gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)
    if len(packed) > ARCHIVE_CAP:
        raise ArchiveError(
            f"{folder} packs to {len(packed) / MIB:.1f} MiB; at most {ARCHIVE_CAP // MIB} MiB are taken "
            "(leave build outputs and data out of the folder)"
        )
    return packed


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


def _check_members(members: list[tarfile.TarInfo]) -> None:
    if len(members) > MEMBER_CAP:
        raise ArchiveError(f"the archive holds {len(members)} members; at most {MEMBER_CAP}")
    total = 0
    for member in members:
        name = member.name
        parts = PurePosixPath(name).parts
        if not parts and member.isdir():
            continue  # "." itself, as `tar -czf bot.tar.gz -C my-bot .` writes it
        if name.startswith("/") or ".." in parts or not parts:
            raise ArchiveError(f"the archive's member {name[:200]!r} lies outside its folder")
        if member.issym():
            target = PurePosixPath(member.linkname)
            inside = PurePosixPath(*parts[:-1], *target.parts)
            depth = 0
            for part in inside.parts:
                depth += -1 if part == ".." else 0 if part == "." else 1
                if depth < 0:
                    break
            if target.is_absolute() or depth < 0:
                raise ArchiveError(
                    f"the archive's member {name[:200]!r} is a link out of its folder; links may only point "
                    "inside it"
                )
        elif not (member.isreg() or member.isdir()):
            raise ArchiveError(
                f"the archive's member {name[:200]!r} is a hard link or a special file; only files, folders "
                "and links inside the folder"
            )
        total += member.size
        if total > UNPACKED_CAP:
            raise ArchiveError(f"the archive unpacks to more than {UNPACKED_CAP // MIB} MiB")
