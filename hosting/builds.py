"""Getting hosted submissions ready to play: each copied into a work folder and built once.

A submission is checked (:func:`submission_files.check_tree`: no link out of its folder, no hard link, no
FIFO) and copied descriptor by descriptor without following links (so that its build cannot touch the
original and no other submission lies beside it). Its build command runs once inside the sandbox with its
own folder writable (and the project's ``.proto`` files read-only at ``$KUTNAHORA_PROTOS``, for builds that
generate code), as a leased user in a control group of its own; its output is kept in ``NAME.build.log``
in the logs folder. Then its run command's program is looked for inside the sandbox (never on the host:
the answer says nothing of the host's files). Whatever goes wrong becomes the submission's ``broken``
reason: its seats are then failed at once with that reason, and the other bots' games are played as usual.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from kutnahora.hosting.sandbox import ENV_PROTOS, Sandbox, SandboxError, bot_env, bot_path
from kutnahora.hosting.submission import (
    Submission,
    SubmissionError,
    check_run_command,
    load,
    missing_program,
    run_program,
)
from kutnahora.hosting.submission_files import LinkError, copy_tree

BUILD_LOG_TAIL = 600  # characters of a failed build's output quoted in its reason (at most)
BUILD_LOG_CAP = 1 << 20  # bytes of a build's output kept in its log (the last ones)
CHECK_SECONDS = 30


@dataclass(frozen=True, slots=True)
class Prepared:
    """A submission after :func:`prepare`: built and ready (``submission``), or ``broken`` with the reason."""

    name: str
    submission: Submission | None = None
    broken: str | None = None


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
    entry: Entry, work: Path, sandbox: Sandbox | None, logs: Path, protos: Path | None = None
) -> Prepared:
    """Copy, build and check one submission; what became of it (:class:`Prepared`), broken with a
    reason if need be.
    ``logs``: where its build log is kept. ``protos``: the project's ``.proto`` files for an unwalled
    build (``KUTNAHORA_PROTOS``); a walled one finds them where the sandbox binds them."""
    if entry.submission is None:
        return Prepared(entry.name, broken=entry.problem or "not a usable submission")
    submission = entry.submission
    folder = work / entry.name
    if folder.exists():
        shutil.rmtree(folder)
    work.mkdir(parents=True, exist_ok=True)
    ready = Submission(submission.name, submission.language, submission.run, folder, submission.build)
    try:
        try:
            copy_tree(submission.folder, folder, f"submission {submission.name}")
        except LinkError as error:
            raise SubmissionError(str(error)) from None
        except OSError as error:
            raise SubmissionError(
                f"submission {submission.name}: cannot copy it: {error.strerror or error}"
            ) from None
        if submission.build:
            await _build(ready, sandbox, logs, protos)
        if sandbox is None:
            check_run_command(ready, bot_path())
        else:
            await _check_inside(ready, sandbox)
    except SubmissionError as error:
        return Prepared(entry.name, broken=str(error))
    return Prepared(entry.name, submission=ready)


async def adopt(submission: Submission, folder: Path, sandbox: Sandbox) -> Prepared:
    """A submission whose folder another worker built, unpacked at ``folder`` (where :func:`prepare` would
    have built it: ``work / NAME``), made ready as a build of its own would be: the folder root's and
    readable by any user, and its run command's program looked for inside the sandbox. ``submission`` is
    its manifest as submitted (never the built folder's, which its build could have changed)."""
    ready = Submission(submission.name, submission.language, submission.run, folder, submission.build)
    try:
        if sandbox.as_root:
            _settle_tree(folder)
        await _check_inside(ready, sandbox)
    except SubmissionError as error:
        return Prepared(submission.name, broken=str(error))
    return Prepared(submission.name, submission=ready)


async def _check_inside(submission: Submission, sandbox: Sandbox) -> None:
    """Look for the run command's program inside the sandbox, as the bot will see it."""
    program = run_program(submission)
    test = f"test -f {shlex.quote(program)}" if "/" in program else f"command -v {shlex.quote(program)}"
    code, _ = await _walled(submission, sandbox, f"{test} >/dev/null 2>&1", CHECK_SECONDS, writable=False)
    if code != 0:
        raise missing_program(submission, program, bot_path())


async def _walled(
    submission: Submission, sandbox: Sandbox, command: str, cpu_seconds: int, *, writable: bool
) -> tuple[int, bytes]:
    """Run ``command`` in the submission's folder walled in, as a leased user in a group of its own;
    its exit status and output. The folder is its user's while it runs, root's (and readable) after."""
    try:
        lease = sandbox.lease()
    except SandboxError as error:
        raise SubmissionError(f"submission {submission.name}: {error}") from None
    group = None
    try:
        uid = lease.uid if lease is not None else None
        if writable and uid is not None:
            _chown_tree(submission.folder, uid)
        group = sandbox.group()
        argv = sandbox.command(
            submission.folder,
            command,
            bot_env(),
            uid=uid,
            socket=None,
            writable=writable,
            cpu_seconds=cpu_seconds,
            group=group,
        )
        return await _run(argv, None, None, float(cpu_seconds) * 2, submission)
    finally:
        if group is not None:
            group.remove()
        if writable and lease is not None:
            _settle_tree(submission.folder)
        if lease is not None:
            lease.release()


async def _build(submission: Submission, sandbox: Sandbox | None, logs: Path, protos: Path | None) -> None:
    assert submission.build is not None
    if sandbox is not None:
        code, output = await _walled(
            submission, sandbox, submission.build, sandbox.limits.build_seconds, writable=True
        )
    else:
        environment = dict(os.environ)
        if protos is not None:
            environment[ENV_PROTOS] = str(protos)
        argv = ["/bin/sh", "-c", submission.build]
        code, output = await _run(argv, submission.folder, environment, 1200.0, submission)
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{submission.name}.build.log"
    log.write_bytes(output[-BUILD_LOG_CAP:])
    if code != 0:
        tail = build_tail(output.decode(errors="replace"))
        raise SubmissionError(
            f"submission {submission.name}: the build ({submission.build}) failed with status {code} "
            f"(its output: {log})" + (f"; it ended with: {tail}" if tail else "")
        )


def build_tail(text: str, limit: int = BUILD_LOG_TAIL) -> str:
    """The end of a build's output, at most ``limit`` characters, starting at a line (or at least a word)
    boundary, its lines joined with `` | ``."""
    text = text.strip()
    if len(text) > limit:
        cut = text[-limit:]
        line = cut.find("\n")
        space = cut.find(" ")
        if 0 <= line < limit // 2:
            cut = cut[line + 1 :]
        elif 0 <= space < limit // 2:
            cut = cut[space + 1 :]
        text = "…" + cut.lstrip()
    return " | ".join(line.rstrip() for line in text.splitlines() if line.strip())


async def _run(
    argv: list[str], cwd: Path | None, env: dict[str, str] | None, timeout: float, submission: Submission
) -> tuple[int, bytes]:
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
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
    except asyncio.CancelledError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, output


def _chown_tree(folder: Path, uid: int) -> None:
    for root, dirs, files in os.walk(folder):
        os.lchown(root, uid, uid)
        for name in [*dirs, *files]:
            os.lchown(os.path.join(root, name), uid, uid)


def _settle_tree(folder: Path) -> None:
    """After a build: the folder back to root, readable (and its programs runnable) by any user, so
    that the bot's own leased user, whichever it is, can run it and none can change it."""
    for root, dirs, files in os.walk(folder):
        os.lchown(root, 0, 0)
        os.chmod(root, 0o755)
        for name in dirs:
            os.lchown(os.path.join(root, name), 0, 0)
        for name in files:
            path = os.path.join(root, name)
            os.lchown(path, 0, 0)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, 0o755 if mode & 0o111 else 0o644)
