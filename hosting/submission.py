"""Hosted submissions: a folder with a ``kutnahora-bot.toml`` manifest, read, checked and built once.

The manifest::

    name = "my-bot"              # letters, digits, '-', '_' and '.', as in the results table
    language = "python"          # free text, shown in the results
    build = "make"               # optional: run once in the submission's folder before the games
    run = "python3 bot.py"       # run for every seat the bot plays, in its folder (a shell command)

A manifest that cannot be read or is missing a field, a build that fails and a run command whose program
is not there are each a :class:`SubmissionError` whose message names the submission; the tournament
records it and the bot's seats are played by the server's random policy, so the other bots' games run.

The folder is a stranger's: before its manifest is read, :func:`submission_files.check_tree` refuses a
submission holding a link out of its folder (or a hard link, a FIFO, a device), and the manifest is read
without following links (:func:`submission_files.read_file`), so neither its content nor an error about it
can carry a byte of a file outside the folder.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kutnahora.hosting.submission_files import LinkError, check_tree, read_file

MANIFEST = "kutnahora-bot.toml"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
FIELDS = {"name": str, "language": str, "build": str, "run": str}
REQUIRED = ("name", "language", "run")
FIELD_CAPS = {"name": 64, "language": 64, "build": 4096, "run": 4096}  # commands reach an argv


class SubmissionError(Exception):
    """A submission cannot play; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class Submission:
    """A submission as its manifest describes it; ``folder`` is where it is built and run from."""

    name: str
    language: str
    run: str
    folder: Path
    build: str | None = None


def load(folder: Path) -> Submission:
    """The submission in ``folder``, checked; :class:`SubmissionError` naming it when it is not usable."""
    label = f"submission {folder}"
    if folder.is_symlink() or not folder.is_dir():
        raise SubmissionError(f"{label}: not a folder (a link to one is not taken)")
    try:
        check_tree(folder, label)
        text = read_file(folder, MANIFEST, label)
    except LinkError as error:
        raise SubmissionError(str(error)) from None
    except FileNotFoundError:
        raise SubmissionError(f"{label}: no {MANIFEST} in it") from None
    except OSError as error:
        raise SubmissionError(f"{label}: cannot read {MANIFEST}: {error.strerror}") from None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise SubmissionError(f"{label}: {MANIFEST} is not valid TOML: {error}") from None
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        shown = ", ".join(key[:40] for key in unknown[:5]) + (" and more" if len(unknown) > 5 else "")
        raise SubmissionError(
            f"{label}: {MANIFEST} has unknown field(s) {shown} (known: {', '.join(FIELDS)})"
        )
    for key, kind in FIELDS.items():
        if key in data and not isinstance(data[key], kind):
            raise SubmissionError(f"{label}: {MANIFEST} field {key!r} must be a string")
    for key, cap in FIELD_CAPS.items():
        if len(data.get(key, "")) > cap:
            raise SubmissionError(f"{label}: {MANIFEST} field {key!r} is longer than {cap} characters")
    missing = [key for key in REQUIRED if not str(data.get(key, "")).strip()]
    if missing:
        raise SubmissionError(f"{label}: {MANIFEST} lacks {', '.join(missing)}")
    name = data["name"].strip()
    if not NAME.match(name):
        raise SubmissionError(
            f"{label}: name {name!r} must be 1 to 64 letters, digits, '-', '_' or '.', starting with a "
            "letter or digit"
        )
    build = data.get("build", "").strip() or None
    return Submission(name, data["language"].strip(), data["run"].strip(), folder, build)


def find(folder: Path) -> list[Path]:
    """The submission folders in ``folder``: each subfolder (sorted by name; hidden ones skipped). A link
    among them is returned too, so that :func:`load` refuses it by name rather than follow it."""
    if not folder.is_dir():
        raise SubmissionError(f"--submissions {folder}: not a folder")
    return sorted(
        p for p in folder.iterdir() if (p.is_dir() or p.is_symlink()) and not p.name.startswith(".")
    )


def run_program(submission: Submission) -> str:
    """The program the run command starts (after any leading ``VAR=value``); :class:`SubmissionError`
    when the command cannot be read or names none."""
    try:
        words = shlex.split(submission.run)
    except ValueError as error:
        raise SubmissionError(f"submission {submission.name}: run command: {error}") from None
    program = next((w for w in words if "=" not in w), "")  # skip leading VAR=value assignments
    if not program:
        raise SubmissionError(f"submission {submission.name}: the run command names no program")
    return program


def missing_program(submission: Submission, program: str, search_path: str) -> SubmissionError:
    """The error for a run command whose program is not there (in the folder, or on the bot's PATH)."""
    if "/" in program:
        return SubmissionError(
            f"submission {submission.name}: the run command's program {program} is not in its folder"
            + (" (did the build make it?)" if submission.build else "")
        )
    return SubmissionError(
        f"submission {submission.name}: the run command's program {program!r} is not installed "
        f"(searched {search_path})"
    )


def check_run_command(submission: Submission, search_path: str) -> None:
    """For a bot run unwalled (``--sandbox none``, the operator's own machine and user): fail, naming
    the submission, when the run command's program is neither in its folder nor on ``search_path``.
    A walled bot's program is looked for inside its sandbox instead (``hosting``), so that the answer
    says nothing about the host."""
    program = run_program(submission)
    if "/" in program:
        if not (submission.folder / program).is_file():
            raise missing_program(submission, program, search_path)
    elif shutil.which(program, path=search_path) is None:
        raise missing_program(submission, program, search_path)
