"""A submission folder packed and unpacked (kutnahora.hosting.archives): the same folder gives the same
bytes, and a stranger's archive is refused, naming what is wrong, before anything is written."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from kutnahora.hosting import archives
from kutnahora.hosting.archives import ArchiveError
from kutnahora.hosting.submission import load


def _folder(root: Path) -> Path:
    folder = root / "bot"
    (folder / "lib").mkdir(parents=True)
    manifest = 'name = "packed"\nlanguage = "python"\nrun = "python3 bot.py"\n'
    (folder / "kutnahora-bot.toml").write_text(manifest)
    (folder / "bot.py").write_text("print('hello')\n")
    (folder / "lib" / "helper.py").write_text("X = 1\n")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(folder / "run.sh", 0o755)
    return folder


def _tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(raw.getvalue())


def test_a_folder_packs_to_the_same_bytes_and_unpacks_to_the_same_files(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    first = archives.pack(folder)
    os.utime(folder / "bot.py", (1, 1))  # times are not part of the archive
    assert archives.pack(folder) == first
    assert archives.digest(first) == archives.digest(archives.pack(folder))
    target = tmp_path / "out"
    archives.unpack(first, target)
    assert (target / "bot.py").read_text() == "print('hello')\n"
    assert (target / "lib" / "helper.py").read_text() == "X = 1\n"
    assert os.access(target / "run.sh", os.X_OK) and not os.access(target / "bot.py", os.X_OK)
    assert load(target).name == "packed"
    (folder / "bot.py").write_text("print('changed')\n")
    assert archives.digest(archives.pack(folder)) != archives.digest(first)


def test_a_link_out_of_the_folder_is_refused_when_packing(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "secret").symlink_to("/etc/passwd")
    with pytest.raises(ArchiveError, match="secret is a symbolic link out of its folder"):
        archives.pack(folder)


@pytest.mark.parametrize(
    ("member", "data", "words"),
    [
        (tarfile.TarInfo("../escape.py"), b"x", "lies outside its folder"),
        (tarfile.TarInfo("/etc/cron.d/job"), b"x", "lies outside its folder"),
        (tarfile.TarInfo("link"), None, "is a link out of its folder"),
        (tarfile.TarInfo("fifo"), None, "is a hard link or a special file"),
    ],
)
def test_a_strangers_archive_with_a_bad_member_is_refused_before_anything_is_written(
    tmp_path: Path, member: tarfile.TarInfo, data: bytes | None, words: str
) -> None:
    if member.name == "link":
        member.type, member.linkname = tarfile.SYMTYPE, "/etc/passwd"
    elif member.name == "fifo":
        member.type = tarfile.FIFOTYPE
    elif data is not None:
        member.size = len(data)
    good = tarfile.TarInfo("kutnahora-bot.toml")
    manifest = b'name = "x"\nlanguage = "sh"\nrun = "true"\n'
    good.size = len(manifest)
    archive = _tar((good, manifest), (member, data))
    target = tmp_path / "out"
    with pytest.raises(ArchiveError, match=words):
        archives.unpack(archive, target)
    assert not target.exists() or not any(target.iterdir())


def test_bombs_and_non_archives_are_refused(tmp_path: Path) -> None:
    bomb = gzip.compress(b"\0" * (archives.UNPACKED_CAP + (8 << 20)))
    assert len(bomb) < archives.ARCHIVE_CAP
    with pytest.raises(ArchiveError, match="unpacks to more than 64 MiB"):
        archives.unpack(bomb, tmp_path / "bomb")
    with pytest.raises(ArchiveError, match="not gzip'd"):
        archives.unpack(b"plain text, not an archive", tmp_path / "text")
    with pytest.raises(ArchiveError, match="at most 4 MiB"):
        archives.unpack(b"\0" * (archives.ARCHIVE_CAP + 1), tmp_path / "big")
    many = [(tarfile.TarInfo(f"d{i}"), None) for i in range(archives.MEMBER_CAP + 1)]
    for info, _ in many:
        info.type = tarfile.DIRTYPE
    with pytest.raises(ArchiveError, match="members; at most 2000"):
        archives.unpack(_tar(*many), tmp_path / "many")


def test_an_archive_made_with_tar_from_inside_the_folder_is_taken(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    archive = tmp_path / "bot.tar.gz"
    import subprocess

    subprocess.run(["tar", "-czf", str(archive), "-C", str(folder), "."], check=True)
    target = tmp_path / "out"
    archives.unpack(archive.read_bytes(), target)
    assert load(target).name == "packed"
    assert (target / "lib" / "helper.py").read_text() == "X = 1\n"


def test_links_inside_the_folder_are_kept_as_links(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "lib" / "bin").mkdir()
    (folder / "lib" / "bin" / "helper").symlink_to("../helper.py")  # as node_modules/.bin holds
    (folder / "current").symlink_to("lib")
    target = tmp_path / "out"
    archives.unpack(archives.pack(folder), target)
    assert os.readlink(target / "lib" / "bin" / "helper") == "../helper.py"
    assert (target / "lib" / "bin" / "helper").read_text() == "X = 1\n"
    assert (target / "current" / "helper.py").read_text() == "X = 1\n"
    climbing = tarfile.TarInfo("lib/up")
    climbing.type, climbing.linkname = tarfile.SYMTYPE, "../../etc/passwd"
    with pytest.raises(ArchiveError, match="lib/up' is a link out of its folder"):
        archives.unpack(_tar((climbing, None)), tmp_path / "climb")


def _link(name: str, target: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info, None


CLIMB = [  # each link alone stays inside by its words; followed through the others they reach / and /etc
    _link("up", "d/.."),  # d is the folder itself, so up is its parent
    *[_link(f"up{n + 1}", f"up{n or ''}/..") for n in range(12)],
    _link("etc", "up12/etc"),
    _link("d", "."),
]


@pytest.mark.parametrize("order", ["links first", "links last"])
def test_links_that_climb_out_through_each_other_are_refused_whatever_their_order(
    tmp_path: Path, order: str
) -> None:
    """tarfile's ``data`` filter resolves a link's target on the disk as it is when the link is
    extracted: a link through links not yet extracted passed it, and ``etc`` led to /etc."""
    outside = tmp_path / "outside"
    outside.mkdir()
    links = CLIMB if order == "links first" else CLIMB[::-1]
    archive = _tar(*links)
    with pytest.raises(ArchiveError, match="is a link out of its folder"):
        archives.unpack(archive, tmp_path / "source")
    packed = tmp_path / "built.tar.gz"
    packed.write_bytes(archive)
    with pytest.raises(ArchiveError, match="is a link out of its folder"):
        archives.unpack_file(packed, outside / "built")
    assert not (tmp_path / "source").exists() and os.listdir(outside) == ["built"]
    assert not any((outside / "built").iterdir())


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ([_link("lib", "."), _link("lib/up", "..")], "'lib/up' lies under a link"),
        ([_link("lib", "."), (tarfile.TarInfo("lib/file"), b"")], "'lib/file' lies under a link"),
        ([(tarfile.TarInfo("run"), b""), _link("run", "lib")], "'run' and a link have the same name"),
        ([_link("run", "lib"), (tarfile.TarInfo("run"), b"")], "'run' and a link have the same name"),
        ([_link("a", "b"), _link("b", "a")], "in a loop of links"),
    ],
)
def test_members_under_links_links_in_place_of_others_and_loops_are_refused(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], words: str
) -> None:
    with pytest.raises(ArchiveError, match=words):
        archives.unpack(_tar(*members), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_links_through_links_that_stay_inside_are_kept(tmp_path: Path) -> None:
    lib = tarfile.TarInfo("lib")
    lib.type = tarfile.DIRTYPE
    helper = tarfile.TarInfo("lib/helper.py")
    helper.size = 6
    archive = _tar(
        _link("here", "."), _link("deep", "here/here/lib/../lib"), (lib, None), (helper, b"X = 1\n")
    )
    archives.unpack(archive, tmp_path / "out")
    assert (tmp_path / "out" / "deep" / "helper.py").read_text() == "X = 1\n"
