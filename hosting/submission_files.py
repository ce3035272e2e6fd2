"""Reading and copying a submission's files without ever following a link out of its folder.

The runner is usually root, and a submission is a stranger's folder: a ``kutnahora-bot.toml`` that is a
symbolic link to ``/etc/shadow``, a source file linked to the server's database, a hard link to a file of
another user, or a FIFO that blocks whoever opens it, must not make the runner read (or copy, and hand to
the bot's user) anything outside the folder. So:

* :func:`check_tree` walks the folder without following links and refuses, naming the file (never its
  target), a symbolic link whose target is absolute or resolves outside the folder, a hard-linked file,
  and anything that is not a file, a folder or such an inner link;
* :func:`read_file` opens a file folder by folder with ``O_NOFOLLOW`` (each step below the previous
  one's descriptor), so a link swapped in after the check is still refused;
* :func:`copy_tree` copies the folder the same way, descriptor by descriptor, inner links as links.

Every refusal is a :class:`LinkError` whose message holds the submission's name
and the offending file's path inside the folder, and nothing read from outside it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

READ_CAP = 1 << 20  # the most bytes read from one file (a manifest)
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class LinkError(Exception):
    """A submission's file that the runner refuses to read: a link out of its folder, or no plain file.
    The message names the submission and the file."""


def check_tree(folder: Path, label: str) -> None:
    """Refuse the submission when anything in ``folder`` is not a plain file, a folder, or a relative
    link that stays inside it; ``label`` names the submission in the message."""
    root = os.path.realpath(folder)
    for current, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = os.path.join(current, name)
            inside = os.path.relpath(path, folder)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                resolved = os.path.realpath(path)
                if os.path.isabs(target) or not _beneath(resolved, root):
                    raise LinkError(
                        f"{label}: {inside} is a symbolic link out of its folder; links may only point "
                        "inside the submission (refused before anything ran; nothing was read through it)"
                    )
            elif stat.S_ISREG(info.st_mode):
                if info.st_nlink > 1:
                    raise LinkError(
                        f"{label}: {inside} is a hard link ({info.st_nlink} names); submit a copy of the "
                        "file instead (refused before anything ran)"
                    )
            elif not stat.S_ISDIR(info.st_mode):
                raise LinkError(
                    f"{label}: {inside} is not a file, a folder or a link (a device, FIFO or socket); "
                    "refused before anything ran"
                )


def read_file(folder: Path, relative: str, label: str) -> bytes:
    """The bytes of ``folder/relative`` (at most :data:`READ_CAP`), opened without following any link:
    :class:`LinkError` when a step is a link, :class:`FileNotFoundError` when it is not there."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise LinkError(f"{label}: {relative} is not a path inside the submission")
    fd = _open_folder(folder, label, ".")
    try:
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            held, fd = fd, -1  # _step closes the folder it opens from, whatever happens
            fd = _step(held, part, FILE if last else DIRECTORY, label, "/".join(parts[: depth + 1]))
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LinkError(f"{label}: {relative} is not a plain file")
        if info.st_nlink > 1:
            raise LinkError(f"{label}: {relative} is a hard link; submit a copy of the file instead")
        chunks: list[bytes] = []
        size = 0
        while size <= READ_CAP and (chunk := os.read(fd, 65536)):
            chunks.append(chunk)
            size += len(chunk)
        if size > READ_CAP:
            raise LinkError(f"{label}: {relative} is larger than {READ_CAP} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def copy_tree(source: Path, target: Path, label: str) -> None:
    """Copy the submission ``source`` to ``target`` (which must not exist), descriptor by descriptor:
    plain files and folders, and relative links inside the folder as links; :class:`LinkError` for
    anything else, as :func:`check_tree` would say."""
    fd = _open_folder(source, label, ".")
    try:
        _copy_folder(fd, target, label, "")
    finally:
        os.close(fd)


def _copy_folder(fd: int, target: Path, label: str, inside: str) -> None:
    target.mkdir(mode=0o755)
    for name in sorted(os.listdir(fd)):
        where = f"{inside}{name}"
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            child = _step(os.dup(fd), name, DIRECTORY, label, where)
            try:
                _copy_folder(child, target / name, label, where + "/")
            finally:
                os.close(child)
        elif stat.S_ISLNK(info.st_mode):
            link = os.readlink(name, dir_fd=fd)
            resolved = os.path.normpath(os.path.join(os.path.dirname(where) or ".", link))
            if os.path.isabs(link) or resolved == ".." or resolved.startswith("../"):
                raise LinkError(f"{label}: {where} is a symbolic link out of its folder")
            os.symlink(link, target / name)
        elif stat.S_ISREG(info.st_mode):
            child = _step(os.dup(fd), name, FILE, label, where)
            try:
                opened = os.fstat(child)
                if not stat.S_ISREG(opened.st_mode) or opened.st_nlink > 1:
                    raise LinkError(f"{label}: {where} is not a plain file of its own")
                with open(target / name, "wb") as out:
                    while chunk := os.read(child, 1 << 20):
                        out.write(chunk)
                os.chmod(target / name, stat.S_IMODE(opened.st_mode) & 0o755 | 0o644)
            finally:
                os.close(child)
        else:
            raise LinkError(f"{label}: {where} is not a file, a folder or a link")


def _open_folder(folder: Path, label: str, inside: str) -> int:
    try:
        return os.open(folder, DIRECTORY)
    except OSError as error:
        if error.errno == errno.ELOOP or error.errno == errno.ENOTDIR:
            raise LinkError(f"{label}: the submission's folder is a link or not a folder") from None
        raise


def _step(fd: int, name: str, flags: int, label: str, inside: str) -> int:
    """Open ``name`` below the folder ``fd`` without following a link. ``fd`` is closed either way
    (so a caller holding it must not close it again: on an error, -1 is what it holds)."""
    try:
        return os.open(name, flags, dir_fd=fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            raise LinkError(
                f"{label}: {inside} is a symbolic link or not a plain file; the runner reads only the "
                "submission's own files (refused unread)"
            ) from None
        raise
    finally:
        os.close(fd)


def _beneath(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
