"""A version built once for all workers, against the fake arena and a real game server: the worker that
builds it uploads its built folder and names it in the build's report; a second worker hosting it adopts
that folder and plays it without building (its bot prints the nonce the one build wrote); a built folder
that does not match its digest, or comes from another platform, is refused and the version built there."""

from __future__ import annotations

import gzip
import io
import os
import re
import shutil
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
