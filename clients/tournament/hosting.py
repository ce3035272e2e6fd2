"""Getting hosted submissions ready to play: each copied into the run's work folder and built once.

A submission is copied (so that its build cannot touch the original and no other submission lies beside
it), its build command runs once inside the sandbox with its own folder writable (and the project's
``.proto`` files read-only at ``$KUTNAHORA_PROTOS``, for builds that generate code), and its run command's
program is checked. Whatever goes wrong becomes the submission's ``broken`` reason: its seats are then
failed at once with that reason, and the other bots' games are played as usual.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from kutnahora.clients.tournament.runner import BotSpec
from kutnahora.clients.tournament.sandbox import ENV_PROTOS, Sandbox, bot_env, bot_path
from kutnahora.clients.tournament.submission import (
    Submission,
    SubmissionError,
    check_run_command,
    load,
)

BUILD_LOG_TAIL = 400  # characters of a failed build's output quoted in its reason


@dataclass(slots=True)
class Entry:
    """One submission folder as the tournament knows it: its bot name and what became of it."""

    name: str
    source: Path
    submission: Submission | None
    problem: str | None


def read(folders: list[Path]) -> list[Entry]:
    """Each folder's manifest; a bad one becomes an entry named for its folder, with the problem."""
    entries: list[Entry] = []
    for folder in folders:
        try:
            submission = load(folder)
            entries.append(Entry(submission.name, folder, submission, None))
        except SubmissionError as error:
            entries.append(Entry(folder.name, folder, None, str(error)))
    names = [e.name for e in entries]
    for entry in entries:
        if names.count(entry.name) > 1 and entry.problem is None:
            entry.problem = f"submission {entry.source}: the name {entry.name!r} is taken by another one"
            entry.submission = None
    return entries


async def prepare(
    entry: Entry, work: Path, sandbox: Sandbox | None, slot: int, protos: Path | None = None
) -> BotSpec:
    """Copy, build and check one submission; its :class:`BotSpec`, broken with a reason if need be.
    ``protos``: the project's ``.proto`` files for an unwalled build (``KUTNAHORA_PROTOS``); a walled one
    finds them where the sandbox binds them."""
    if entry.submission is None:
        return BotSpec(entry.name, broken=entry.problem or "not a usable submission")
    submission = entry.submission
    folder = work / entry.name
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(submission.folder, folder, symlinks=True)
    ready = Submission(submission.name, submission.language, submission.run, folder, submission.build)
    try:
        if submission.build:
            await _build(ready, sandbox, slot, protos)
        check_run_command(ready, bot_path())
    except SubmissionError as error:
        return BotSpec(entry.name, broken=str(error))
    return BotSpec(entry.name, submission=ready)


async def _build(submission: Submission, sandbox: Sandbox | None, slot: int, protos: Path | None) -> None:
    assert submission.build is not None
    if sandbox is not None:
        owner = sandbox.owner(slot)
        if owner is not None:
            _chown_tree(submission.folder, owner)
        env = bot_env()
        argv = sandbox.command(
            submission.folder,
            submission.build,
            env,
            slot=slot,
            socket=None,
            writable=True,
            cpu_seconds=sandbox.limits.build_seconds,
        )
        cwd = None
        environment: dict[str, str] | None = None
        timeout = float(sandbox.limits.build_seconds) * 2
    else:
        argv = ["/bin/sh", "-c", submission.build]
        cwd = submission.folder
        environment = dict(os.environ)
        if protos is not None:
            environment[ENV_PROTOS] = str(protos)
        timeout = 1200.0
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=environment,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise SubmissionError(
            f"submission {submission.name}: the build did not finish in {timeout:g} s"
        ) from None
    (submission.folder.parent / f"{submission.name}.build.log").write_bytes(output[-(1 << 20) :])
    if process.returncode != 0:
        tail = output.decode(errors="replace").strip()[-BUILD_LOG_TAIL:]
        raise SubmissionError(
            f"submission {submission.name}: the build ({submission.build}) failed with status "
            f"{process.returncode}" + (f": {tail}" if tail else "")
        )


def _chown_tree(folder: Path, uid: int) -> None:
    for root, dirs, files in os.walk(folder):
        os.lchown(root, uid, uid)
        for name in [*dirs, *files]:
            os.lchown(os.path.join(root, name), uid, uid)
