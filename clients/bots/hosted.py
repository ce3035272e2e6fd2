"""``kutnahora-bot submit``, ``submissions`` and ``hosting``: an author's hosted bot in an arena.

Examples::

    kutnahora-bot submit my-bot/ --arena localhost:50061 --key-file my-bot.key --wait
    kutnahora-bot submit my-bot/ --arena localhost:50061 --key-file my-bot.key --pools 2,4
    kutnahora-bot submissions --arena localhost:50061 --key-file my-bot.key
    kutnahora-bot hosting pause --arena localhost:50061 --key-file my-bot.key

``submit`` reads the folder's ``kutnahora-bot.toml`` and packs the folder
(:func:`kutnahora.hosting.archives.pack`) before it contacts the arena: a folder that cannot be taken (a
link out of it, a special file, too large, no manifest) is refused with one sentence and nothing is sent.
The arena keeps the archive as a new version of the bot (the same archive again is the same version) and
its sandbox workers build it; ``--wait`` follows the build and prints its outcome and its log's tail.

Exit status: 0 when done (``--wait``: the version built), 1 when the arena refuses (or, with ``--wait``,
the build failed), 2 for a usage error, a folder that cannot be submitted or an unreachable arena.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.bots.arena import ENV_ARENA_KEY, add_tls_options, read_key
from kutnahora.clients.sdk import ClientError, ConnectError
from kutnahora.hosting.archives import ArchiveError, pack
from kutnahora.hosting.submission import SubmissionError, load
from kutnahora.v1 import arena_service_pb2

ENV_ARENA = "KUTNAHORA_ARENA"
LOG_TAIL = 4000  # characters of a build's log printed by --wait (its end)
POLL_SECONDS = 2.0
STATES = {
    arena_service_pb2.SUBMISSION_STATE_BUILDING: "building",
    arena_service_pb2.SUBMISSION_STATE_READY: "ready",
    arena_service_pb2.SUBMISSION_STATE_FAILED: "failed",
}
COMMANDS = ("submit", "submissions", "hosting")


class Refused(Exception):
    """The command cannot go on; the message says why, the code is the exit status."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def _arena_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--arena",
        default=os.environ.get(ENV_ARENA, "localhost:50061"),
        help=f"the arena's address host:port (default: ${ENV_ARENA} or localhost:50061)",
    )
    parser.add_argument(
        "--key-file", help=f"file holding the bot's arena API key (default: ${ENV_ARENA_KEY})"
    )
    add_tls_options(parser)
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def build_submit_parser() -> argparse.ArgumentParser:
    """The parser of ``kutnahora-bot submit``."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-bot submit",
        description="Upload a submission folder (kutnahora-bot.toml: name, language, build, run) as a new "
        "hosted version of the bot: the arena's sandbox workers build it and play the bot's rated games "
        "with the newest version that built. The manifest's name must be the bot's. See "
        "docs/hosted-bots.md.",
    )
    parser.add_argument("folder", type=Path, help="the submission folder (at most 4 MiB packed)")
    _arena_options(parser)
    parser.add_argument(
        "--pools",
        default="",
        help="pools to seek the bot's hosted games in, comma-separated, such as 2 or 2,4 "
        "(default: every pool)",
    )
    parser.add_argument(
        "--wait", action="store_true", help="wait until it is built; print the outcome and the log's end"
    )
    parser.add_argument(
        "--wait-timeout",
        type=float,
        default=1800.0,
        help="seconds --wait waits for the build (default %(default)s)",
    )
    return parser


def build_submissions_parser() -> argparse.ArgumentParser:
    """The parser of ``kutnahora-bot submissions``."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-bot submissions",
        description="List the bot's hosted versions, newest first: their build state, which one is "
        "played, and whether (and why) its hosted play is paused.",
    )
    _arena_options(parser)
    return parser


def build_hosting_parser() -> argparse.ArgumentParser:
    """The parser of ``kutnahora-bot hosting``."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-bot hosting",
        description="Pause or resume the hosted play of the bot. Resuming also clears a pause the arena "
        "made after repeated failures; the newest version that built is played again.",
    )
    parser.add_argument("action", choices=("pause", "resume"), help="pause or resume")
    _arena_options(parser)
    return parser


def _key(args: argparse.Namespace) -> str:
    key = read_key(args.key_file)
    if key is None:
        where = args.key_file or f"${ENV_ARENA_KEY}"
        raise Refused(
            f"no arena API key in {where} (register with 'kutnahora-bot register NAME --key-file FILE')"
        )
    return key


def _pack(folder: Path) -> bytes:
    """The folder packed, or :class:`Refused` saying why it cannot be submitted."""
    try:
        load(folder)
        return pack(folder)
    except (SubmissionError, ArchiveError) as error:
        raise Refused(f"cannot submit {folder}: {error}") from None


def describe(submission: arena_service_pb2.Submission) -> str:
    """One line for a version: number, digest, state, and what it plays or why it failed."""
    state = STATES.get(submission.state, "unknown")
    line = f"version {submission.version} ({submission.digest[:12]}, {submission.size_bytes} bytes, "
    line += f"{submission.language or '?'}): {state}"
    if submission.playing:
        line += ", playing"
    if submission.games:
        line += f", {submission.games} rated games"
    if submission.reason:
        line += f": {submission.reason}"
    return line


async def run_submit(args: argparse.Namespace, console: Console) -> int:
    """``kutnahora-bot submit``; the exit status."""
    archive = _pack(args.folder)
    key = _key(args)
    pools = [p.strip() for p in args.pools.split(",") if p.strip()]
    async with await ArenaClient.connect(args.arena, tls=args.tls, ca_cert=args.ca_cert) as arena:
        response = await arena.submit_bot(key, archive, pools)
        submission = response.submission
        if not args.quiet:
            kept = "a new version" if response.created else "already submitted: the same version"
            console.print(escape(f"Submitted {args.folder}: {kept}."))
            console.print(escape(describe(submission)))
        if not args.wait:
            return 0 if submission.state != arena_service_pb2.SUBMISSION_STATE_FAILED else 1
        built = await _wait_built(arena, key, submission.version, args.wait_timeout)
    outcome = built.submission
    if not args.quiet or outcome.state == arena_service_pb2.SUBMISSION_STATE_FAILED:
        console.print(escape(describe(outcome)))
        log = built.build_log.strip()
        if log:
            tail = log[-LOG_TAIL:]
            cut = " (its end)" if len(log) > LOG_TAIL else ""
            console.print(f"The build's log{cut}:")
            console.print(escape(tail), markup=False, highlight=False)
    return 0 if outcome.state == arena_service_pb2.SUBMISSION_STATE_READY else 1


async def _wait_built(
    arena: ArenaClient, key: str, version: int, timeout: float
) -> arena_service_pb2.GetSubmissionResponse:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        response = await arena.submission(key, version)
        if response.submission.state != arena_service_pb2.SUBMISSION_STATE_BUILDING:
            return response
        if loop.time() >= deadline:
            raise Refused(
                f"version {version} was still waiting to be built after {timeout:g} s (is a sandbox worker "
                "running? see it later with 'kutnahora-bot submissions')",
                1,
            )
        await asyncio.sleep(POLL_SECONDS)


async def run_submissions(args: argparse.Namespace, console: Console) -> int:
    """``kutnahora-bot submissions``; the exit status."""
    key = _key(args)
    async with await ArenaClient.connect(args.arena, tls=args.tls, ca_cert=args.ca_cert) as arena:
        listed = await arena.submissions(key)
    if listed.name:
        console.print(escape(f"Bot {listed.name}:"))
    if not listed.submissions:
        console.print("No hosted versions yet (submit one with 'kutnahora-bot submit FOLDER').")
    for submission in listed.submissions:
        console.print(escape(describe(submission)))
    pools = ", ".join(listed.pools) or "every pool"
    if listed.paused:
        console.print(escape(f"Hosted play is paused: {listed.paused_reason or 'by its author'}."))
        console.print("Resume it with 'kutnahora-bot hosting resume'.")
    elif listed.submissions:
        console.print(escape(f"Hosted play is on, in {pools}."))
    return 0


async def run_hosting(args: argparse.Namespace, console: Console) -> int:
    """``kutnahora-bot hosting pause|resume``; the exit status."""
    key = _key(args)
    async with await ArenaClient.connect(args.arena, tls=args.tls, ca_cert=args.ca_cert) as arena:
        paused = await arena.set_hosting(key, paused=args.action == "pause")
    if not args.quiet:
        console.print("The bot's hosted play is paused." if paused else "The bot's hosted play is on.")
    return 0


def main(arguments: Sequence[str], console: Console) -> int:
    """Run ``kutnahora-bot submit|submissions|hosting ...`` (``arguments`` start with the command)."""
    command, rest = arguments[0], list(arguments[1:])
    try:
        if command == "submit":
            return asyncio.run(run_submit(build_submit_parser().parse_args(rest), console))
        if command == "submissions":
            return asyncio.run(run_submissions(build_submissions_parser().parse_args(rest), console))
        return asyncio.run(run_hosting(build_hosting_parser().parse_args(rest), console))
    except Refused as refused:
        print(f"kutnahora-bot: {refused}", file=sys.stderr)
        return refused.code
    except ConnectError as failure:
        print(f"kutnahora-bot: {failure}", file=sys.stderr)
        return 2
    except ClientError as failure:
        print(f"kutnahora-bot: {failure}", file=sys.stderr)
        return 1
