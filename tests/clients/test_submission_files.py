"""A submission's files are read without following links out of its folder, and its run command is looked
for inside the sandbox, never on the host.

Each hostile folder is made by the test: a manifest that is a symbolic link to a root-only file holding a
secret, a link out of the folder deeper down (to that file, to ``/etc/shadow``, through an inner link
and ``..``), a hard link, a FIFO (which would block a reader for ever), a submission folder that is itself
a link. Each is refused by name, before anything runs, and the secret appears nowhere: not in the error,
the tournament's output, its results or its logs. A link that stays inside the folder is fine.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kutnahora.hosting import builds
from kutnahora.hosting.sandbox import Sandbox
from kutnahora.hosting.submission import MANIFEST, SubmissionError, load
from tests.clients.helpers import ROOT

SECRET = "TOPSECRET-4711"
GOOD_MANIFEST = 'name = "{name}"\nlanguage = "python"\nrun = "python3 -m kutnahora.clients.bots.cli greedy"\n'


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "private" / "secret.toml"
    path.parent.mkdir()
    path.write_text(f'name = "{SECRET}"\nlanguage = "{SECRET}"\nrun = "true"\n{SECRET} = 1\n')
    os.chmod(path, 0o600)
    return path


def submission(root: Path, name: str, manifest: bool = True) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if manifest:
        (folder / MANIFEST).write_text(GOOD_MANIFEST.format(name=name))
    return folder


def hostile(root: Path, secret: Path) -> dict[str, str]:
    """Hostile submissions under ``root``; for each, the file its refusal must name."""
    linked = submission(root, "linkedmanifest", manifest=False)
    (linked / MANIFEST).symlink_to(secret)
    deep = submission(root, "deeplink")
    (deep / "src").mkdir()
    (deep / "src" / "data.txt").symlink_to(secret)
    shadow = submission(root, "shadowlink")
    (shadow / "shadow").symlink_to("/etc/shadow")
    dotdot = submission(root, "dotdot")
    (dotdot / "up").symlink_to("../../private/secret.toml")
    chain = submission(root, "chain")
    (chain / "d").mkdir()
    (chain / "d" / "here").symlink_to("..")  # inside: d/here is the folder itself
    (chain / "escape").symlink_to("d/here/..")  # …so this is the folder's parent
    hard = submission(root, "hardlink")
    os.link(secret, hard / "again.toml")  # the root-only file itself, under a second name
    fifo = submission(root, "fifo")
    os.mkfifo(fifo / "pipe")
    (root / "folderlink").symlink_to(secret.parent)
    return {
        "linkedmanifest": MANIFEST,
        "deeplink": "src/data.txt",
        "shadowlink": "shadow",
        "dotdot": "up",
        "chain": "escape",
        "hardlink": "again.toml",
        "fifo": "pipe",
        "folderlink": "not a folder",
    }


def test_each_link_out_of_the_folder_is_refused_by_name_and_nothing_is_read(
    tmp_path: Path, secret: Path
) -> None:
    expected = hostile(tmp_path / "submissions", secret)
    for name, named in expected.items():
        with pytest.raises(SubmissionError) as caught:
            load(tmp_path / "submissions" / name)
        message = str(caught.value)
        assert named in message, message
        assert SECRET not in message and "secret.toml" not in message and "/etc/shadow" not in message


def test_a_link_inside_the_folder_is_kept(tmp_path: Path) -> None:
    folder = submission(tmp_path, "inner")
    (folder / "lib").mkdir()
    (folder / "lib" / "real.py").write_text("x = 1\n")
    (folder / "bot.py").symlink_to("lib/real.py")
    loaded = load(folder)
    assert loaded.name == "inner"
    entry = builds.Entry("inner", folder, loaded, None)
    spec = asyncio.run(builds.prepare(entry, tmp_path / "work", None, tmp_path / "logs"))
    assert spec.broken is None, spec.broken
    assert os.readlink(tmp_path / "work" / "inner" / "bot.py") == "lib/real.py"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_run_command_is_looked_for_inside_the_sandbox_not_on_the_host(tmp_path: Path) -> None:
    """A host path that exists and one that does not get the same answer: neither is in the sandbox."""
    there = tmp_path / "host-tool"
    there.write_text("#!/bin/sh\n")
    there.chmod(0o755)
    sandbox = Sandbox()
    sandbox.setup(tmp_path / "leases")
    answers = {}
    try:
        for name, program in (("exists", str(there)), ("absent", str(tmp_path / "no-such-tool"))):
            folder = submission(tmp_path / "subs", name)
            (folder / MANIFEST).write_text(f'name = "{name}"\nlanguage = "sh"\nrun = "{program} --play"\n')
            entry = builds.Entry(name, folder, load(folder), None)
            spec = asyncio.run(builds.prepare(entry, tmp_path / "work", sandbox, tmp_path / "logs"))
            assert spec.broken is not None
            answers[name] = spec.broken.replace(program, "PROGRAM")
        # and a program that is in the sandbox (the system's shell) is found there
        folder = submission(tmp_path / "subs", "shell")
        (folder / MANIFEST).write_text('name = "shell"\nlanguage = "sh"\nrun = "/bin/sh -c true"\n')
        spec = asyncio.run(
            builds.prepare(
                builds.Entry("shell", folder, load(folder), None),
                tmp_path / "work",
                sandbox,
                tmp_path / "logs",
            )
        )
        assert spec.broken is None, spec.broken
    finally:
        sandbox.close()
    assert answers["exists"].replace("exists", "X") == answers["absent"].replace("absent", "X")
    assert "is not in its folder" in answers["exists"]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_tournament_refuses_them_before_anything_runs_and_the_secret_appears_nowhere(
    tmp_path: Path, secret: Path
) -> None:
    submissions = tmp_path / "submissions"
    expected = hostile(submissions, secret)
    out = tmp_path / "out" / "results.json"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "kutnahora.clients.tournament.cli"),
            *("--submissions", str(submissions), "--bots", "greedy", "--players", "2", "--games", "9"),
            *("--sandbox-runtime", str(tmp_path / "leases"), "--out", str(out), "--quiet"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # submissions could not play: said in the exit status
    for name, named in expected.items():
        assert f"{name} could not play" in output and named in output, name
    everything = output + out.read_text()
    for path in out.parent.rglob("*"):
        if path.is_file():
            everything += path.read_text(errors="replace")
    assert SECRET not in everything and "/etc/shadow" not in everything
    results = json.loads(out.read_text())
    assert all(g["scores"] is not None for g in results["games"])  # their seats lost, every game played


def test_an_argv_bomb_in_the_manifest_is_refused(tmp_path: Path) -> None:
    folder = submission(tmp_path, "bomb")
    (folder / MANIFEST).write_text(f'name = "bomb"\nlanguage = "sh"\nrun = "echo {"x" * 200_000}"\n')
    with pytest.raises(SubmissionError, match="field 'run' is longer than 4096 characters"):
        load(folder)
    (folder / MANIFEST).write_text('name = "bomb"\nlanguage = "sh"\nrun = "true"\n' + "#" * (2 << 20) + "\n")
    with pytest.raises(SubmissionError, match="larger than"):
        load(folder)
