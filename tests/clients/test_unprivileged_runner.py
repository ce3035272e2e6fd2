"""A tournament runner that is not root: the sandbox falls back to a user namespace (``--unshare-user``),
every bot runs as the runner's own user, and the walls still stand.

The runner runs as ``nobody`` (``setpriv``) with a work folder of its own. The project's Python may lie
under a folder only root may enter (``/root`` in CI); the test then shows the runner that Python through
a read-only bind in a mount namespace of its own (bubblewrap as root, no other change), so that what runs
as ``nobody`` is exactly the runner a user would start. A well-behaved submission and the built-in greedy
bot play a reader that tries the other submission's manifest and a file of the runner's user (both
readable by that user: only the mounts keep them out), and ``/etc/shadow``.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kutnahora.hosting.sandbox import python_paths
from tests.clients.helpers import ROOT

HOSTILE = ROOT / "tests" / "clients" / "hostile"

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user"),
]


def nobody() -> int:
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("there is no user 'nobody'")


def hidden_from_others(paths: list[str]) -> dict[str, list[str]]:
    """For each folder that other users may not enter (no o+x), the needed paths below it."""
    hidden: dict[str, list[str]] = {}
    for path in paths:
        for folder in [*reversed(Path(path).parents), Path(path)]:
            if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
                hidden.setdefault(str(folder), []).append(path)
                break
    return hidden


def as_nobody(uid: int, command: list[str], env: dict[str, str]) -> list[str]:
    """``command`` run as ``uid``, seeing the project's Python even where it lies in a private folder."""
    needed = [*python_paths(), os.path.dirname(os.path.realpath(sys.executable)), str(ROOT)]
    view: list[str] = []
    for folder, paths in sorted(hidden_from_others(needed).items()):
        view += ["--perms", "0755", "--tmpfs", folder]
        for path in sorted(set(paths)):
            between = [p for p in reversed(Path(path).parents) if str(p).startswith(folder + "/")]
            for step in between:  # bubblewrap would make them private, as the host's folder is
                view += ["--perms", "0755", "--dir", str(step)]
            view += ["--ro-bind", path, path]
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]
    settings = [arg for key, value in sorted(env.items()) for arg in ("--setenv", key, value)]
    if not view:
        return ["env", *(f"{k}={v}" for k, v in sorted(env.items())), *drop, *command]
    return ["bwrap", "--dev-bind", "/", "/", *view, *settings, "--", *drop, *command]


@pytest.fixture(scope="module")
def run() -> Iterator[tuple[subprocess.CompletedProcess[str], Path]]:
    uid = nobody()
    base = Path(tempfile.mkdtemp(prefix="kutnahora-unprivileged-"))
    try:
        os.chmod(base, 0o755)
        submissions = base / "submissions"
        for name in ("good", "reader"):
            shutil.copytree(HOSTILE / name, submissions / name)
        home = base / "home"
        home.mkdir()
        os.chown(home, uid, uid)
        out = home / "results.json"
        secret = home / "runner-secret.txt"  # the runner's own file: its user may read it, a bot must not
        secret.write_text("the runner's\n")
        os.chown(secret, uid, uid)
        os.chmod(secret, 0o600)
        (submissions / "reader" / "targets.txt").write_text(
            f"{submissions / 'good' / 'kutnahora-bot.toml'}\n{secret}\n/etc/shadow\n"
        )
        env = {
            "HOME": str(home),
            "TMPDIR": str(home),
            "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "LANG": "C.UTF-8",
        }
        command = [
            *(sys.executable, "-m", "kutnahora.clients.tournament.cli"),
            *("--submissions", str(submissions), "--bots", "greedy", "--players", "2", "--games", "4"),
            *("--concurrency", "2", "--out", str(out), "--quiet"),
        ]
        done = subprocess.run(
            as_nobody(uid, command, env),
            capture_output=True,
            text=True,
            timeout=600,
            cwd=home,
            check=False,
        )
        yield done, out
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_tournament_completes_as_an_unprivileged_user(
    run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = run
    assert done.returncode == 0, done.stdout + done.stderr
    assert out.stat().st_uid == nobody()  # written by the runner, which was not root
    games = json.loads(out.read_text())["games"]
    assert len(games) == 4
    assert all(g["scores"] is not None for g in games)
    good = [f for g in games for f in g["failures"] if f["bot"] in ("good", "greedy")]
    assert good == []
    assert any("good" in g["bots"] for g in games)


def test_the_walls_stand_without_root(run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = run
    results = json.loads(out.read_text())
    logs = out.with_name("results.logs")
    texts = []
    for game in results["games"]:
        for seat, bot in enumerate(game["bots"]):
            if bot == "reader":
                texts.append((logs / f"{game['game_id']}-seat{seat}.log").read_text())
    assert texts, "the reader played no game"
    log = "\n".join(texts)
    assert "LEAKED" not in log, log
    secret = out.with_name("runner-secret.txt")
    assert f"BLOCKED read {secret}: No such file or directory" in log  # its user's file: not mounted
    assert "good/kutnahora-bot.toml: No such file or directory" in log
    assert "BLOCKED read /etc/shadow" in log
    assert "BLOCKED write /bot: Read-only file system" in log
