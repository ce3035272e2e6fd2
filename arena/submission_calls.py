"""What the ``ArenaService`` answers a hosted bot's author: SubmitBot, ListSubmissions, GetSubmission,
GetSeatLog and SetHosting, for the account whose API key the call carries (never a lease's seek key).

A submitted archive is checked before anything is kept: unpacked into a temporary folder
(:func:`kutnahora.hosting.archives.unpack`: a gzip'd tar of plain files within the caps), its manifest read
(:func:`kutnahora.hosting.submission.load`) and its run command's program named; the manifest's name must
be the bot's, and the pools must exist. Then, in one transaction, the same archive again is the version it
already is, and a new one is the account's next version, to build, unless the account has submitted its
daily allowance (``--submissions-per-day`` in the last 24 hours). Code, build logs and seat logs go only
to their own account.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import timestamp_pb2

from kutnahora.arena.accounts import Account
from kutnahora.arena.metrics import ArenaMetrics
from kutnahora.arena.store import ArenaStore
from kutnahora.arena.submissions import BUILDING, FAILED, READY, Hosting, OverAllowance, Version
from kutnahora.hosting import archives
from kutnahora.hosting.submission import SubmissionError, load, run_program
from kutnahora.plumbing.errors import ServiceError, clip, exhausted, invalid
from kutnahora.v1 import arena_service_pb2 as pb

STATES = {
    BUILDING: pb.SUBMISSION_STATE_BUILDING,
    READY: pb.SUBMISSION_STATE_READY,
    FAILED: pb.SUBMISSION_STATE_FAILED,
}
PAUSED_BY_AUTHOR = "paused by its author"
CHECKS_AT_ONCE = 2
"""Archives unpacked and checked at once (each up to 64 MiB on disk); more SubmitBot calls wait their turn,
so that a flood of them keeps no more than two busy."""


def _timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(int(seconds * 1e9))
    return stamp


def submission_message(version: Version, playing: int) -> pb.Submission:
    """A version as the wire has it; ``playing`` is the account's version played now (0: none)."""
    return pb.Submission(
        version=version.version,
        digest=version.digest,
        size_bytes=version.size_bytes,
        language=version.language,
        submitted_at=_timestamp(version.submitted_at),
        state=STATES[version.state],
        reason=version.reason,
        playing=version.version == playing,
        games=version.games,
    )


def playing_version(versions: Sequence[Version], hosting: Hosting) -> int:
    """The version played now: the newest ready one unless the bot is paused (0: none)."""
    if hosting.paused:
        return 0
    return max((v.version for v in versions if v.state == READY), default=0)


def check_archive(archive: bytes) -> tuple[str, str]:
    """The manifest's name and language of a submitted archive; :class:`ServiceError` (INVALID_ARGUMENT)
    saying what is wrong with it. Unpacks it into a temporary folder, removed before this returns."""
    if not archive:
        raise invalid("SubmitBot needs the archive: the submission folder as a gzip'd tar")
    with tempfile.TemporaryDirectory(prefix="kutnahora-submission-") as folder:
        target = Path(folder) / "bot"
        try:
            archives.unpack(archive, target)
            submission = load(target)
            run_program(submission)
        except (archives.ArchiveError, SubmissionError) as error:
            message = str(error).replace(f"submission {target}", "the archive").replace(str(target), ".")
            raise invalid(f"the archive was not taken: {message}") from None
        return submission.name, submission.language


class SubmissionCalls:
    """The authors' calls, behind the servicer's counting, authentication and refusals."""

    def __init__(
        self, store: ArenaStore, pools: Sequence[str], *, per_day: int, metrics: ArenaMetrics, log: Any
    ) -> None:
        self.store = store
        self.pools = tuple(pools)
        self.per_day = per_day
        self.metrics = metrics
        self.log = log
        self._checks = asyncio.Semaphore(CHECKS_AT_ONCE)

    async def submit(self, account: Account, request: pb.SubmitBotRequest) -> pb.SubmitBotResponse:
        """Keep a new version (or find the one the archive is) and set the bot's pools."""
        try:
            pools = self._pools(request.pools)
            async with self._checks:
                name, language = await asyncio.to_thread(check_archive, request.archive)
            if name != account.name:
                raise invalid(
                    f"the manifest names bot {clip(name)!r}, but the key is bot {account.name!r}'s: a bot "
                    f"submits its own code only (name = {account.name!r} in kutnahora-bot.toml)"
                )
        except ServiceError:
            self.metrics.submissions.labels(outcome="invalid").inc()
            raise
        digest = archives.digest(request.archive)
        try:
            version, created = await self.store.submit(
                account.account_id, request.archive, digest, language, pools, self.per_day
            )
        except OverAllowance as over:
            self.metrics.submissions.labels(outcome="over_allowance").inc()
            raise exhausted(
                f"SubmitBot refused: bot {account.name!r} submitted {over.count} new versions in the last 24 "
                f"hours, its allowance of {self.per_day}; try again in {over.retry_after / 3600:.1f} h",
                "submissions_per_day",
                retry_after=over.retry_after,
                metadata={"quota": "submissions_per_day", "limit": str(self.per_day)},
            ) from None
        self.metrics.submissions.labels(outcome="created" if created else "existing").inc()
        self.log.info(
            "version submitted" if created else "version submitted again",
            bot=account.name,
            version=version.version,
            digest=digest,
            size=len(request.archive),
        )
        versions = await self.store.versions(account.account_id)
        playing = playing_version(versions, await self.store.hosting(account.account_id))
        return pb.SubmitBotResponse(submission=submission_message(version, playing), created=created)

    def _pools(self, names: Sequence[str]) -> list[str]:
        unknown = [name for name in names if name not in self.pools]
        if unknown:
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"there is no pool {clip(unknown[0])!r}; the pools are {', '.join(sorted(self.pools))}",
                "unknown_pool",
            )
        return sorted(set(names))

    async def list(self, account: Account) -> pb.ListSubmissionsResponse:
        """The bot's name, every version (newest first) and its hosting settings."""
        versions = await self.store.versions(account.account_id)
        hosting = await self.store.hosting(account.account_id)
        playing = playing_version(versions, hosting)
        return pb.ListSubmissionsResponse(
            submissions=[submission_message(v, playing) for v in versions],
            paused=hosting.paused,
            paused_reason=hosting.paused_reason,
            pools=list(hosting.pools),
            name=account.name,
        )

    async def get(self, account: Account, number: int) -> pb.GetSubmissionResponse:
        """One version with its build log; NOT_FOUND for a version the bot does not have."""
        found = await self.store.version(account.account_id, number)
        if found is None:
            raise ServiceError(
                grpc.StatusCode.NOT_FOUND, f"bot {account.name!r} has no version {number}", "not_found"
            )
        version, build_log = found
        versions = await self.store.versions(account.account_id)
        playing = playing_version(versions, await self.store.hosting(account.account_id))
        return pb.GetSubmissionResponse(submission=submission_message(version, playing), build_log=build_log)

    async def seat_log(self, account: Account, game_id: str) -> pb.GetSeatLogResponse:
        """The bot's hosted seat of a game with its log; NOT_FOUND alike for a game that is not there, is
        another bot's, or was not played by the bot's hosted code."""
        if not game_id:
            raise invalid("GetSeatLog needs the game's id")
        found = await self.store.seat_log(account.account_id, game_id)
        if found is None:
            raise ServiceError(
                grpc.StatusCode.NOT_FOUND,
                f"bot {account.name!r}'s hosted code played no seat of a game {clip(game_id)!r}",
                "not_found",
            )
        return pb.GetSeatLogResponse(
            game_id=found.game_id,
            seat=found.seat,
            version=found.version,
            log=found.log,
            truncated=found.truncated,
            outcome=found.outcome,
        )

    async def set_hosting(self, account: Account, paused: bool) -> pb.SetHostingResponse:
        """Pause or resume the bot's hosted play (resuming clears a pause after failures)."""
        hosting = await self.store.set_paused(account.account_id, paused, PAUSED_BY_AUTHOR)
        self.log.info("hosting paused" if paused else "hosting resumed", bot=account.name)
        return pb.SetHostingResponse(paused=hosting.paused)
