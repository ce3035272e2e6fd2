"""A version built once for all workers, against the fake arena and a real game server: the worker that
builds it uploads its built folder and names it in the build's report; a second worker hosting it adopts
that folder and plays it without building (its bot prints the nonce the one build wrote); a built folder
that does not match its digest, or comes from another platform, is refused and the version built there."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shutil
import stat
import tarfile
from pathlib import Path
from typing import Any

import pytest

from kutnahora.hosting.archives import pack
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.worker.builds import platform
from tests.worker.fake_arena import FakeArena
from tests.worker.test_worker import free_port, scrape

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's walls (leased users, cgroups) need root"),
]

BUILD = """od -An -N8 -tx1 /dev/urandom | tr -d ' \\n' > nonce.txt
cat > play <<'EOF'
#!/bin/sh
echo "nonce $(cat nonce.txt)"
exec python3 -m kutnahora.clients.bots.cli greedy
EOF
chmod +x play
"""


def nonce_bot(folder: Path) -> bytes:
    """A submission whose build writes a random nonce, and whose bot prints it before it plays: each
    build of it is told from every other by what its seats print."""
    folder.mkdir(parents=True)
    (folder / "kutnahora-bot.toml").write_text(
        'name = "nonce"\nlanguage = "sh"\nbuild = "sh build.sh"\nrun = "./play"\n', encoding="utf-8"
    )
    (folder / "build.sh").write_text(BUILD, encoding="utf-8")
    return pack(folder)


def nonce_in(built: bytes) -> str:
    """The nonce a built folder (a gzip'd tar) holds."""
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(built))) as tar:
        member = tar.extractfile("nonce.txt")
        assert member is not None
        return member.read().decode()


def printed_nonce(arena: FakeArena) -> str:
    (ended,) = [r for r in arena.seat_reports if r.outcome != pb.SEAT_OUTCOME_STARTED]
    assert ended.outcome == pb.SEAT_OUTCOME_FINISHED, (ended.reason, ended.log)
    found = re.search(rb"nonce ([0-9a-f]{16})", ended.log)
    assert found is not None, ended.log
    return found.group(1).decode()


async def build_and_upload(arena: FakeArena, start_worker: Any, archive: bytes) -> pb.BuiltArtifact:
    """One worker builds the version and uploads its built folder; the artifact it reported."""
    builder = await start_worker("--seats", "0", "--builds", "1")
    arena.queue_build("nonce", 1, archive)
    await arena.wait_for(lambda: len(arena.build_reports) == 1, timeout=120)
    (report,) = arena.build_reports
    assert report.ok, (report.reason, builder.output())
    assert report.built_digest in arena.built, builder.output()
    assert await builder.terminate() == 0
    artifact, _ = arena.built[report.built_digest]
    assert artifact.platform == platform() and artifact.size_bytes > 0
    return artifact


async def test_a_second_worker_plays_the_first_workers_build_without_building(
    arena: FakeArena, start_worker: Any, tmp_path: Path
) -> None:
    archive = nonce_bot(tmp_path / "nonce")
    artifact = await build_and_upload(arena, start_worker, archive)
    built_nonce = nonce_in(arena.built[artifact.digest][1])
    port = free_port()
    host = await start_worker("--seats", "1", "--builds", "0", "--metrics-port", str(port))
    arena.queue_host("nonce", archive, built=artifact)
    await arena.wait_for(lambda: len(arena.releases) == 1, timeout=120)
    assert printed_nonce(arena) == built_nonce, host.output()  # the uploaded build played, none other
    metrics = scrape(port)
    assert metrics["kutnahora_worker_versions_ready_total[('how', 'adopted')]"] == 1
    assert metrics["kutnahora_worker_versions_ready_total[('how', 'built')]"] == 0
    assert arena.built_fetches == [artifact.digest]
    output = host.output()
    assert "adopted" in output and "build failed" not in output
    assert not re.search(r"\] built\b", output), output
    assert await host.terminate() == 0


@pytest.mark.parametrize("refusal", ["tampered", "another platform"])
async def test_a_built_folder_that_does_not_match_is_refused_and_the_version_built_here(
    arena: FakeArena, start_worker: Any, tmp_path: Path, refusal: str
) -> None:
    archive = nonce_bot(tmp_path / "nonce")
    artifact = await build_and_upload(arena, start_worker, archive)
    built_nonce = nonce_in(arena.built[artifact.digest][1])
    offered = pb.BuiltArtifact()
    offered.CopyFrom(artifact)
    if refusal == "tampered":
        arena.tamper_built = True
    else:
        offered.platform = "riscv64; some other system"
    host = await start_worker("--seats", "1", "--builds", "0")
    arena.queue_host("nonce", archive, built=offered)
    await arena.wait_for(lambda: len(arena.releases) == 1, timeout=120)
    played = printed_nonce(arena)
    assert played != built_nonce and len(played) == 16, host.output()  # built here, with a nonce of its own
    output = host.output()
    if refusal == "tampered":
        assert arena.built_fetches == [artifact.digest]
        assert "does not match its digest" in output
    else:
        assert arena.built_fetches == []
        assert "built on another platform" in output
    assert "adopted" not in output
    assert await host.terminate() == 0


async def test_a_built_folder_past_the_arenas_bound_is_not_uploaded(
    arena: FakeArena, start_worker: Any, tmp_path: Path
) -> None:
    arena.built_max_bytes = 100  # far smaller than any built folder
    builder = await start_worker("--seats", "0", "--builds", "1")
    arena.queue_build("nonce", 1, nonce_bot(tmp_path / "nonce"))
    await arena.wait_for(lambda: len(arena.build_reports) == 1, timeout=120)
    (report,) = arena.build_reports
    assert report.ok and report.built_digest == "" and arena.built == {}, builder.output()
    assert "the built folder is not shared" in builder.output()
    assert await builder.terminate() == 0


CRAFTED_NONCE = "0badc0de0badc0de"


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b"") -> tuple[Any, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size, info.mode = kind, link, len(data), 0o755
    if kind == tarfile.CHRTYPE:
        info.devmajor, info.devminor = 1, 3  # /dev/null's numbers
    return info, data


def hostile(outside: Path, kind: str) -> list[tuple[Any, bytes]]:
    """The members a hostile build (or a worker-token holder crafting the upload) adds to a built folder,
    each aimed at ``outside``, a folder beside the worker's work folder."""
    climb = "../" * 40  # from anywhere: up to /
    route = str(outside).lstrip("/")
    if kind == "link to /":
        return [_member("root", tarfile.SYMTYPE, "/")]
    if kind == "link to a file outside":
        return [_member("secret", tarfile.SYMTYPE, f"{climb}{route}/secret")]
    if kind == "links climbing through each other":  # each alone stays inside by its words
        ups = [_member(f"up{n + 1}", tarfile.SYMTYPE, f"up{n or ''}/..") for n in range(40)]
        return [
            _member("secret", tarfile.SYMTYPE, f"up40/{route}/secret"),
            *ups[::-1],
            _member("up", tarfile.SYMTYPE, "here/.."),
            _member("here", tarfile.SYMTYPE, "."),
        ]
    if kind == "hard link":
        return [_member("secret", tarfile.LNKTYPE, str(outside / "secret"))]
    if kind == "fifo":
        return [_member("pipe", tarfile.FIFOTYPE)]
    if kind == "device":
        return [_member("null", tarfile.CHRTYPE)]
    assert kind == "path with .."
    return [_member(f"{climb}{route}/planted", data=b"planted\n")]


def crafted_built(outside: Path, kind: str) -> bytes:
    """A built folder of the nonce bot (its own nonce) with a hostile member."""
    play = b'#!/bin/sh\necho "nonce $(cat nonce.txt)"\nexec python3 -m kutnahora.clients.bots.cli greedy\n'
    members = [_member("nonce.txt", data=CRAFTED_NONCE.encode()), _member("play", data=play)]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in [*members, *hostile(outside, kind)]:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return gzip.compress(raw.getvalue(), mtime=0)


def links_out(folder: Path) -> list[str]:
    """What under ``folder`` (links not followed) is a link resolving outside it, a hard-linked file, or
    a special file but a socket (the seat gateways')."""
    found = []
    root = os.path.realpath(folder)
    for current, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = os.path.join(current, name)
            info = os.lstat(path)
            if os.path.islink(path):
                if not os.path.realpath(path).startswith(root + os.sep):
                    found.append(path)
            elif stat.S_ISREG(info.st_mode):
                if info.st_nlink > 1:
                    found.append(path)
            elif not (stat.S_ISDIR(info.st_mode) or stat.S_ISSOCK(info.st_mode)):
                found.append(path)
    return found


@pytest.mark.parametrize(
    "kind",
    [
        "link to /",
        "link to a file outside",
        "links climbing through each other",
        "hard link",
        "fifo",
        "device",
        "path with ..",
    ],
)
async def test_a_hostile_built_folder_is_refused_and_the_version_built_here(
    arena: FakeArena, start_worker: Any, tmp_path: Path, kind: str
) -> None:
    """The attacker holds a worker token (or wrote the build that another worker uploaded): the built
    folder it uploads holds a link out, a hard link, a special file or a path climbing out. The worker
    that adopts it refuses it before writing anything, builds the version itself and plays its own build;
    nothing outside its folder is created or touched, and its work folder holds no link out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret"
    secret.write_text("the worker must not reach this\n")
    os.chmod(secret, 0o600)
    before = os.stat(secret)
    data = crafted_built(outside, kind)
    artifact = pb.BuiltArtifact(
        digest=hashlib.sha256(data).hexdigest(), size_bytes=len(data), platform=platform()
    )
    arena.built[artifact.digest] = (artifact, data)
    archive = nonce_bot(tmp_path / "nonce")
    host = await start_worker("--seats", "1", "--builds", "0")
    arena.queue_host("nonce", archive, built=artifact)
    await arena.wait_for(lambda: len(arena.releases) == 1, timeout=120)
    output = host.output()
    assert arena.built_fetches == [artifact.digest]
    assert "the built folder cannot be unpacked; building it here" in output, output
    assert "adopted" not in output
    played = printed_nonce(arena)
    assert played != CRAFTED_NONCE and len(played) == 16, output  # its own build played
    assert links_out(host.work) == []  # the room (a tmpfs under it) is still mounted
    assert sorted(os.listdir(outside)) == ["secret"]
    after = os.stat(secret)
    assert (after.st_mode, after.st_uid, after.st_nlink) == (before.st_mode, before.st_uid, 1)
    assert await host.terminate() == 0
