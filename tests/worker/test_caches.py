"""What a worker keeps on disk is bounded (``--keep-versions``): the archives of the most recently used
versions, and the built folders of the most recent versions and of every version a job plays; an unwalled
worker shares no built folder; a built folder that cannot be shared is left out, not reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

from kutnahora.hosting.archives import digest, pack
from kutnahora.worker.builds import Builder


class Archives:
    """The arena's GetArchive, from a dict (what a test packed)."""

    def __init__(self) -> None:
        self.kept: dict[str, bytes] = {}
        self.fetched: list[str] = []

    def add(self, folder: Path, name: str, marker: str) -> str:
        folder.mkdir(parents=True)
        (folder / "kutnahora-bot.toml").write_text(
            f'name = "{name}"\nlanguage = "python"\nrun = "python3 bot.py"\n', encoding="utf-8"
        )
        (folder / "bot.py").write_text(f"print({marker!r})\n", encoding="utf-8")
        archive = pack(folder)
        self.kept[digest(archive)] = archive
        return digest(archive)

    async def archive(self, wanted: str) -> bytes:
        self.fetched.append(wanted)
        return self.kept[wanted]


def builder(tmp_path: Path, client: Any, keep: int) -> Builder:
    quiet = structlog.wrap_logger(structlog.ReturnLogger(), processors=[])  # logs nowhere
    made = Builder(client, tmp_path / "work", None, quiet, keep=keep)
    made.setup()
    return made


async def test_archives_and_built_folders_are_kept_to_the_most_recent(tmp_path: Path) -> None:
    client = Archives()
    digests = [client.add(tmp_path / f"bot{n}", f"bot{n}", f"v{n}") for n in range(4)]
    work = builder(tmp_path, client, keep=2)
    first = await work.build(digests[0])
    assert first.ok and first.submission is not None
    work.use(digests[0])  # a job plays version 0 throughout
    for wanted in digests[1:]:
        assert (await work.build(wanted)).ok
    archives = sorted(p.name.removesuffix(".tar.gz") for p in (work.work / "archives").glob("*.tar.gz"))
    assert archives == sorted(digests[2:]), "the two most recently used archives"
    folders = {p.name for p in (work.room / "builds").iterdir()}
    assert folders == {digests[0][:24], digests[2][:24], digests[3][:24]}, "the played one is kept"
    assert first.submission.folder.is_dir()
    work.done_with(digests[0])
    assert {p.name for p in (work.room / "builds").iterdir()} == {digests[2][:24], digests[3][:24]}
    assert not (work.work / "build-logs").exists() or not any((work.work / "build-logs").iterdir())
    # A version forgotten is fetched and built again when a job asks for it.
    assert (await work.build(digests[1])).ok and client.fetched.count(digests[1]) == 2
    assert work.builds_run == 5


async def test_an_unwalled_worker_shares_no_built_folder(tmp_path: Path) -> None:
    client = Archives()
    wanted = client.add(tmp_path / "bot", "bot", "v")
    work = builder(tmp_path, client, keep=4)
    assert (await work.build(wanted)).ok
    assert not work.shares and await work.publish(wanted, "lease", 1 << 30) == ""


async def test_built_folders_left_by_an_earlier_run_are_removed_at_setup(tmp_path: Path) -> None:
    stale = tmp_path / "work" / "builds" / ("0" * 24) / "old"
    stale.mkdir(parents=True)
    (tmp_path / "work" / "archives").mkdir(parents=True)
    (tmp_path / "work" / "archives" / "x.part").write_bytes(b"half")
    builder(tmp_path, Archives(), keep=2)
    assert not stale.exists() and not (tmp_path / "work" / "archives" / "x.part").exists()
