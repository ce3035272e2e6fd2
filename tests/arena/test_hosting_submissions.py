"""Hosted bots' authors: SubmitBot (a new version, the same archive again, archives and manifests refused,
another bot's name, unknown pools, the daily allowance), ListSubmissions, GetSubmission and SetHosting,
each refusal with its ErrorInfo reason and nothing kept."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import grpc
import pytest

from kutnahora.arena.app import Arena, create_arena
from kutnahora.hosting.archives import ARCHIVE_CAP, digest
from kutnahora.v1 import arena_service_pb2 as pb
from tests.arena.conftest import arena_config
from tests.arena.hosting_helpers import archive, auth, metric, refused, stubs


async def register(arena_stub: object, name: str) -> str:
    response = await arena_stub.RegisterBot(pb.RegisterBotRequest(name=name))  # type: ignore[attr-defined]
    return str(response.api_key)


def tar_of(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue())


async def test_a_version_is_kept_once_by_digest_and_listed(arena: Arena, tmp_path: Path) -> None:
    async with stubs(arena) as (bots, _):
        key = await register(bots, "author-1")
        first = archive(tmp_path / "one", "author-1", marker="one")
        submitted = await bots.SubmitBot(
            pb.SubmitBotRequest(archive=first, pools=["3", "2"]), metadata=auth(key)
        )
        assert submitted.created and submitted.submission.version == 1
        assert submitted.submission.digest == digest(first) and submitted.submission.size_bytes == len(first)
        assert submitted.submission.state == pb.SUBMISSION_STATE_BUILDING
        assert submitted.submission.language == "python" and not submitted.submission.playing
        again = await bots.SubmitBot(pb.SubmitBotRequest(archive=first), metadata=auth(key))
        assert not again.created and again.submission.version == 1, "the same archive is the same version"
        second = archive(tmp_path / "two", "author-1", marker="two")
        newer = await bots.SubmitBot(pb.SubmitBotRequest(archive=second, pools=["4"]), metadata=auth(key))
        assert newer.created and newer.submission.version == 2
        listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
        assert [s.version for s in listed.submissions] == [2, 1], "newest first"
        assert list(listed.pools) == ["4"] and not listed.paused and listed.paused_reason == ""
        got = await bots.GetSubmission(pb.GetSubmissionRequest(version=1), metadata=auth(key))
        assert got.submission.digest == digest(first) and got.build_log == "", "not built yet"
        await refused(
            bots.GetSubmission(pb.GetSubmissionRequest(version=3), metadata=auth(key)),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )
        # another bot sees none of them, and its same archive would be its own version
        other = await register(bots, "author-2")
        assert not (await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(other))).submissions
        await refused(
            bots.GetSubmission(pb.GetSubmissionRequest(version=1), metadata=auth(other)),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )
        assert metric(arena, "kutnahora_arena_submissions_total", outcome="created") == 2
        assert metric(arena, "kutnahora_arena_submissions_total", outcome="existing") == 1
        profile = await bots.GetBotProfile(pb.GetBotProfileRequest(name="author-1"))
        assert not profile.hosted and profile.hosted_version == 0, "no version has built"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        pytest.param(b"", "needs the archive", id="empty"),
        pytest.param(b"not a tar at all", "not gzip'd", id="not-gzip"),
        pytest.param(b"\0" * (ARCHIVE_CAP + 1), "at most 4 MiB", id="too-large"),
        pytest.param(tar_of({"bot.py": b"print()"}), "no kutnahora-bot.toml", id="no-manifest"),
        pytest.param(tar_of({"kutnahora-bot.toml": b"name = [broken"}), "not valid TOML", id="bad-toml"),
        pytest.param(
            tar_of({"kutnahora-bot.toml": b'name = "writer"\nlanguage = "c"\n'}), "lacks run", id="no-run"
        ),
        pytest.param(tar_of({"../escape": b"x"}), "outside its folder", id="escape"),
        pytest.param(
            tar_of({"kutnahora-bot.toml": b'name = "someone-else"\nlanguage = "c"\nrun = "./a"\n'}),
            "someone-else",
            id="another-name",
        ),
    ],
)
async def test_a_bad_archive_or_another_bots_name_is_refused_and_nothing_kept(
    arena: Arena, content: bytes, why: str
) -> None:
    async with stubs(arena) as (bots, _):
        key = await register(bots, "writer")
        message, _ = await refused(
            bots.SubmitBot(pb.SubmitBotRequest(archive=content), metadata=auth(key)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "MALFORMED",
        )
        assert why in message
        assert "/tmp" not in message, "the arena's temporary folder is not named"
        assert not (await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))).submissions
        assert metric(arena, "kutnahora_arena_submissions_total", outcome="invalid") == 1


async def test_unknown_pools_and_missing_keys_are_refused(arena: Arena, tmp_path: Path) -> None:
    async with stubs(arena) as (bots, _):
        key = await register(bots, "pooled")
        packed = archive(tmp_path / "b", "pooled")
        await refused(
            bots.SubmitBot(pb.SubmitBotRequest(archive=packed, pools=["2", "9"]), metadata=auth(key)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "UNKNOWN_POOL",
        )
        for call in (
            bots.SubmitBot(pb.SubmitBotRequest(archive=packed)),
            bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth("wrong")),
            bots.SetHosting(pb.SetHostingRequest(paused=True)),
            bots.GetSeatLog(pb.GetSeatLogRequest(game_id="g"), metadata=auth("wrong")),
        ):
            await refused(call, grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
        assert not (await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))).submissions


async def test_the_daily_allowance_refuses_new_versions_only(tmp_path: Path, game_server: str) -> None:
    config = arena_config(tmp_path / "a.db", game_server, submissions_per_day=2)
    arena, _ = await create_arena("127.0.0.1:0", config)
    await arena.start()
    try:
        async with stubs(arena) as (bots, _):
            key = await register(bots, "prolific")
            packed = [archive(tmp_path / str(n), "prolific", marker=str(n)) for n in range(3)]
            for content in packed[:2]:
                assert (
                    await bots.SubmitBot(pb.SubmitBotRequest(archive=content), metadata=auth(key))
                ).created
            message, delay = await refused(
                bots.SubmitBot(pb.SubmitBotRequest(archive=packed[2]), metadata=auth(key)),
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "QUOTA_EXCEEDED",
            )
            assert "allowance of 2" in message and delay is not None and 86_000 < delay <= 86_400
            again = await bots.SubmitBot(pb.SubmitBotRequest(archive=packed[0]), metadata=auth(key))
            assert not again.created, "an archive submitted before is not a new version"
            listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
            assert [s.version for s in listed.submissions] == [2, 1]
            assert metric(arena, "kutnahora_arena_submissions_total", outcome="over_allowance") == 1
            other = await register(bots, "patient")
            fresh = archive(tmp_path / "p", "patient")
            assert (await bots.SubmitBot(pb.SubmitBotRequest(archive=fresh), metadata=auth(other))).created
    finally:
        await arena.stop(0)


async def test_set_hosting_pauses_and_resumes(arena: Arena) -> None:
    async with stubs(arena) as (bots, _):
        key = await register(bots, "pauser")
        assert (await bots.SetHosting(pb.SetHostingRequest(paused=True), metadata=auth(key))).paused
        listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
        assert listed.paused and listed.paused_reason == "paused by its author"
        assert not (await bots.SetHosting(pb.SetHostingRequest(paused=False), metadata=auth(key))).paused
        listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
        assert not listed.paused and listed.paused_reason == ""
