"""An ArenaService for the author's pages' tests: the hosted-bot calls kept in memory, faithfully to the
contract (protos/kutnahora/v1/arena_service.proto and the hosted bots' design), and the public calls
passed on to a real arena.

The author's calls check the API key they receive (``authorization: Bearer <key>``) against the bots the
test gave (:meth:`FakeArena.add_bot`): an unknown key is UNAUTHENTICATED, a revoked one too, naming the
bot. ``SubmitBot`` reads the archive as the arena does (:func:`kutnahora.hosting.archives.unpack`, the
manifest's name must be the bot's), keeps one version per digest (the same archive again is that version,
``created=false``), counts the day's allowance and the pools; ``ListSubmissions`` lists newest first, the
newest ready version playing; ``GetSeatLog`` finds only the calling bot's own seats (another bot's game is
NOT_FOUND, as an unknown one). The test plays the worker's part (:meth:`FakeArena.built`,
:meth:`FakeArena.seat_played`).

``ListPools``, ``GetLeaderboard`` and ``GetBotProfile`` are the real arena's answers (``forward``), with
``hosted`` and ``hosted_version`` set for the bots this fake hosts. Every call is noted in
:attr:`FakeArena.calls` (the call's name and the key it carried) so that tests can see what the web sent.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import tempfile
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from kutnahora.hosting.archives import ArchiveError, unpack
from kutnahora.plumbing import auth
from kutnahora.v1 import arena_service_pb2, arena_service_pb2_grpc

NO_SUCH_LOG = "the bot has no log of a game {!r}"
BUILDING = arena_service_pb2.SUBMISSION_STATE_BUILDING
READY = arena_service_pb2.SUBMISSION_STATE_READY
FAILED = arena_service_pb2.SUBMISSION_STATE_FAILED


@dataclass
class Version:
    submission: arena_service_pb2.Submission
    archive: bytes
    build_log: str = ""


@dataclass
class Bot:
    name: str
    key: str
    revoked: bool = False
    versions: list[Version] = field(default_factory=list)
    pools: list[str] = field(default_factory=list)
    paused: bool = False
    paused_reason: str = ""
    seat_logs: dict[str, arena_service_pb2.GetSeatLogResponse] = field(default_factory=dict)
    submitted_today: int = 0

    def playing(self) -> Version | None:
        ready = [v for v in self.versions if v.submission.state == READY]
        return max(ready, key=lambda v: v.submission.version) if ready else None


class Refused(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class FakeArena(arena_service_pb2_grpc.ArenaServiceServicer):  # type: ignore[misc]
    """The hosted-bot calls of an arena, in memory; the public calls of ``forward``."""

    def __init__(
        self, forward: str | None, pools: tuple[str, ...] = ("2", "3", "4"), submissions_per_day: int = 20
    ) -> None:
        self.lock = threading.Lock()
        self.bots: dict[str, Bot] = {}
        self.pool_names = pools
        self.submissions_per_day = submissions_per_day
        self.calls: list[tuple[str, str | None]] = []
        self.forward: Any = None
        self._channel: grpc.Channel | None = None
        if forward is not None:
            self._channel = grpc.insecure_channel(forward)
            self.forward = arena_service_pb2_grpc.ArenaServiceStub(self._channel)  # type: ignore[no-untyped-call]

    # What the test does: bots, builds and seats.

    def add_bot(self, name: str, key: str) -> None:
        with self.lock:
            self.bots[name] = Bot(name, key)

    def revoke(self, name: str) -> None:
        with self.lock:
            self.bots[name].revoked = True

    def built(self, name: str, version: int, *, ok: bool, log: str, reason: str = "") -> None:
        """A worker built ``version``: ready, or failed saying ``reason``; a new ready version resumes."""
        with self.lock:
            bot = self.bots[name]
            found = next(v for v in bot.versions if v.submission.version == version)
            found.submission.state = READY if ok else FAILED
            found.submission.reason = "" if ok else reason
            found.build_log = log
            if ok:
                bot.paused, bot.paused_reason = False, ""
            self._mark_playing(bot)

    def seat_played(
        self, name: str, game_id: str, seat: int, log: str, outcome: str = "finished", truncated: bool = False
    ) -> None:
        """A worker played ``name``'s seat of ``game_id`` with its playing version."""
        with self.lock:
            bot = self.bots[name]
            playing = bot.playing()
            bot.seat_logs[game_id] = arena_service_pb2.GetSeatLogResponse(
                game_id=game_id,
                seat=seat,
                version=playing.submission.version if playing else 0,
                log=log,
                truncated=truncated,
                outcome=outcome,
            )

    def pause_after_failures(self, name: str, last: str) -> None:
        with self.lock:
            bot = self.bots[name]
            bot.paused, bot.paused_reason = True, f"paused after 3 failures in a row; the last: {last}"

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Serve on a free loopback port; yields its address."""
        server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(8),
            options=[("grpc.max_receive_message_length", 5 * 1024 * 1024)],
        )
        arena_service_pb2_grpc.add_ArenaServiceServicer_to_server(self, server)  # type: ignore[no-untyped-call]
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            yield f"127.0.0.1:{port}"
        finally:
            server.stop(None).wait()
            if self._channel is not None:
                self._channel.close()

    # The calls.

    def _mark_playing(self, bot: Bot) -> None:
        playing = bot.playing()
        for version in bot.versions:
            version.submission.playing = version is playing

    def _caller(self, context: grpc.ServicerContext, rpc: str) -> Bot:
        key = auth.token_from_metadata(context.invocation_metadata())
        self.calls.append((rpc, key))
        if not key:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED,
                "this call needs the bot's API key as 'authorization: Bearer <key>'",
            )
        bot = next((b for b in self.bots.values() if b.key == key), None)
        if bot is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the API key is not one the arena knows")
        if bot.revoked:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, f"the API key of bot {bot.name!r} was revoked")
        return bot

    def _answer(self, context: grpc.ServicerContext, rpc: str, work: Any) -> Any:
        with self.lock:
            try:
                return work(self._caller(context, rpc))
            except Refused as refused:
                context.abort(refused.code, refused.message)

    def SubmitBot(self, request: Any, context: grpc.ServicerContext) -> Any:
        def submit(bot: Bot) -> Any:
            name, language = manifest(request.archive)
            if name != bot.name:
                raise Refused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"the manifest names the bot {name!r}; this key is bot {bot.name!r}'s",
                )
            unknown = [p for p in request.pools if p not in self.pool_names]
            if unknown:
                raise Refused(grpc.StatusCode.INVALID_ARGUMENT, f"there is no pool {unknown[0]!r}")
            digest = hashlib.sha256(request.archive).hexdigest()
            same = next((v for v in bot.versions if v.submission.digest == digest), None)
            if same is not None:
                return arena_service_pb2.SubmitBotResponse(submission=same.submission, created=False)
            if bot.submitted_today >= self.submissions_per_day:
                raise Refused(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"bot {bot.name!r} has submitted {self.submissions_per_day} versions today, its "
                    "daily allowance",
                )
            bot.submitted_today += 1
            submission = arena_service_pb2.Submission(
                version=len(bot.versions) + 1,
                digest=digest,
                size_bytes=len(request.archive),
                language=language,
                state=BUILDING,
                games=0,
            )
            submission.submitted_at.GetCurrentTime()
            bot.versions.append(Version(submission, request.archive))
            bot.pools = list(request.pools)
            self._mark_playing(bot)
            return arena_service_pb2.SubmitBotResponse(submission=submission, created=True)

        return self._answer(context, "SubmitBot", submit)

    def ListSubmissions(self, request: Any, context: grpc.ServicerContext) -> Any:
        def listing(bot: Bot) -> Any:
            newest_first = sorted(bot.versions, key=lambda v: -v.submission.version)
            return arena_service_pb2.ListSubmissionsResponse(
                submissions=[v.submission for v in newest_first],
                paused=bot.paused,
                paused_reason=bot.paused_reason,
                pools=bot.pools,
                name=bot.name,
            )

        return self._answer(context, "ListSubmissions", listing)

    def GetSubmission(self, request: Any, context: grpc.ServicerContext) -> Any:
        def one(bot: Bot) -> Any:
            found = next((v for v in bot.versions if v.submission.version == request.version), None)
            if found is None:
                raise Refused(grpc.StatusCode.NOT_FOUND, f"bot {bot.name!r} has no version {request.version}")
            return arena_service_pb2.GetSubmissionResponse(
                submission=found.submission, build_log=found.build_log
            )

        return self._answer(context, "GetSubmission", one)

    def GetSeatLog(self, request: Any, context: grpc.ServicerContext) -> Any:
        def log(bot: Bot) -> Any:
            found = bot.seat_logs.get(request.game_id)
            if found is None:
                raise Refused(grpc.StatusCode.NOT_FOUND, NO_SUCH_LOG.format(request.game_id))
            return found

        return self._answer(context, "GetSeatLog", log)

    def SetHosting(self, request: Any, context: grpc.ServicerContext) -> Any:
        def switch(bot: Bot) -> Any:
            bot.paused = request.paused
            bot.paused_reason = "paused by its author" if request.paused else ""
            return arena_service_pb2.SetHostingResponse(paused=bot.paused)

        return self._answer(context, "SetHosting", switch)

    # The public calls, the real arena's, with the hosted fields of the bots hosted here.

    def _forwarded(self, rpc: str, request: Any, context: grpc.ServicerContext) -> Any:
        self.calls.append((rpc, auth.token_from_metadata(context.invocation_metadata())))
        if self.forward is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{rpc} is not served here")
        try:
            return getattr(self.forward, rpc)(request, timeout=10)
        except grpc.RpcError as error:
            context.abort(error.code(), error.details())

    def _hosted(self, name: str) -> int:
        with self.lock:
            bot = self.bots.get(name)
            playing = bot.playing() if bot is not None and not bot.paused else None
            return playing.submission.version if playing is not None else 0

    def ListPools(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._forwarded("ListPools", request, context)

    def GetLeaderboard(self, request: Any, context: grpc.ServicerContext) -> Any:
        board = self._forwarded("GetLeaderboard", request, context)
        for entry in board.entries:
            entry.hosted_version = self._hosted(entry.name)
            entry.hosted = entry.hosted_version > 0
        return board

    def GetBotProfile(self, request: Any, context: grpc.ServicerContext) -> Any:
        profile = self._forwarded("GetBotProfile", request, context)
        profile.hosted_version = self._hosted(profile.name)
        profile.hosted = profile.hosted_version > 0
        return profile


def manifest(archive: bytes) -> tuple[str, str]:
    """The manifest's name and language of a submission's archive, read as the arena reads it."""
    with tempfile.TemporaryDirectory() as folder:
        try:
            unpack(archive, Path(folder) / "bot")
            data = tomllib.loads((Path(folder) / "bot" / "kutnahora-bot.toml").read_text(encoding="utf-8"))
        except ArchiveError as error:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, f"the archive cannot be read: {error}") from None
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT, f"the archive's kutnahora-bot.toml cannot be read: {error}"
            ) from None
    return str(data.get("name", "")), str(data.get("language", ""))
