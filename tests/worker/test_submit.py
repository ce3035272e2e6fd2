"""``kutnahora-bot submit``, ``submissions`` and ``hosting`` against the fake arena: a folder that cannot be
taken is refused before the arena is contacted; a submission is uploaded as packed, and ``--wait`` follows
its build to the end."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

from kutnahora.hosting.archives import digest, pack
from kutnahora.v1 import arena_service_pb2 as apb
from tests.clients.helpers import ROOT
from tests.worker.conftest import HOSTILE
from tests.worker.fake_arena import FakeArena


async def bot(*args: str) -> tuple[int, str, str]:
    """Run ``kutnahora-bot ARGS``; its exit status, output and errors."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "kutnahora.clients.bots.cli", *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def key_file(tmp_path: Path, arena: FakeArena) -> str:
    path = tmp_path / "bot.key"
    path.write_text(arena.api_key + "\n")
    return str(path)


async def test_a_folder_with_a_link_out_of_it_is_refused_before_the_arena_is_asked(
    arena: FakeArena, tmp_path: Path
) -> None:
    folder = tmp_path / "good"
    shutil.copytree(HOSTILE / "good", folder)
    (folder / "secrets").symlink_to("/etc/passwd")
    code, _, err = await bot(
        "submit", str(folder), "--arena", arena.address, "--key-file", key_file(tmp_path, arena)
    )
    assert code == 2
    assert f"cannot submit {folder}" in err and "secrets" in err and "link" in err
    assert arena.submit_calls == 0


async def test_a_folder_without_a_manifest_is_refused_before_the_arena_is_asked(
    arena: FakeArena, tmp_path: Path
) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    code, _, err = await bot(
        "submit", str(folder), "--arena", arena.address, "--key-file", key_file(tmp_path, arena)
    )
    assert code == 2 and "kutnahora-bot.toml" in err
    assert arena.submit_calls == 0


async def test_submit_uploads_the_packed_folder_and_waits_for_its_build(
    arena: FakeArena, tmp_path: Path
) -> None:
    folder = HOSTILE / "good"
    key = key_file(tmp_path, arena)
    arena.build_outcome = (apb.SUBMISSION_STATE_READY, "", "step one\nthe build's last line\n")
    code, out, err = await bot("submit", str(folder), "--arena", arena.address, "--key-file", key, "--wait")
    assert code == 0, err
    (version,) = arena.versions
    assert version.archive == pack(folder)  # the same bytes as packed here
    expected = digest(pack(folder))
    assert f"version 1 ({expected[:12]}" in out and "a new version" in out
    assert "ready, playing" in out and "the build's last line" in out
    code, out, _ = await bot("submit", str(folder), "--arena", arena.address, "--key-file", key)
    assert code == 0 and "already submitted" in out and len(arena.versions) == 1


async def test_a_failed_build_is_shown_with_its_log_and_exits_1(arena: FakeArena, tmp_path: Path) -> None:
    arena.build_outcome = (
        apb.SUBMISSION_STATE_FAILED,
        "the build (make) failed with status 2",
        "cc: error: no such file\n",
    )
    code, out, _ = await bot(
        "submit",
        str(HOSTILE / "failingbuild"),
        "--arena",
        arena.address,
        "--key-file",
        key_file(tmp_path, arena),
        "--wait",
    )
    assert code == 1
    assert "failed: the build (make) failed with status 2" in out and "cc: error: no such file" in out


async def test_a_wrong_key_is_the_arenas_refusal(arena: FakeArena, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.key"
    wrong.write_text("not-the-key\n")
    code, _, err = await bot(
        "submit", str(HOSTILE / "good"), "--arena", arena.address, "--key-file", str(wrong)
    )
    assert code == 1 and "UNAUTHENTICATED" in err


async def test_submissions_lists_the_versions_and_hosting_pauses_and_resumes(
    arena: FakeArena, tmp_path: Path
) -> None:
    key = key_file(tmp_path, arena)
    assert (
        await bot("submit", str(HOSTILE / "good"), "--arena", arena.address, "--key-file", key, "--wait")
    )[0] == 0
    code, out, _ = await bot("hosting", "pause", "--arena", arena.address, "--key-file", key)
    assert code == 0 and "paused" in out and arena.paused
    code, out, _ = await bot("submissions", "--arena", arena.address, "--key-file", key)
    assert code == 0
    assert "version 1" in out and "ready, playing" in out
    assert "Hosted play is paused: paused after 3 failures in a row" in out
    code, out, _ = await bot("hosting", "resume", "--arena", arena.address, "--key-file", key)
    assert code == 0 and "is on" in out and not arena.paused


async def test_an_unreachable_arena_exits_2(tmp_path: Path) -> None:
    key = tmp_path / "bot.key"
    key.write_text("k\n")
    code, _, err = await bot(
        "submit", str(HOSTILE / "good"), "--arena", "127.0.0.1:1", "--key-file", str(key)
    )
    assert code == 2 and "cannot connect to the arena" in err
