"""The starter kits (clients/go, clients/cpp, clients/java, clients/node): each built as its README says
(the Go, C++ and Java kits from the project's .proto files with Debian's packages) plays full games
against the server, reads the ErrorInfo reason of a refused call, and runs as a hosted submission inside
the sandbox: submitted as the very folder its README built in (its build/ folder included), built there
again by its own manifest (no network; the protos bound read-only at $KUTNAHORA_PROTOS).

Runs where the kit's toolchain is installed (CI installs it); skipped otherwise, saying what is missing.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.clients.helpers import run_module
from tests.clients.kit_builds import KITS, Kit, build_kit

TOURNAMENT = "kutnahora.clients.tournament.cli"


@pytest.fixture(scope="module", params=KITS)
def kit(request: pytest.FixtureRequest) -> Kit:
    """The kit built by its README's build block (once per session, tests/clients/kit_builds.py)."""
    return build_kit(request.param)


def test_the_kit_bot_plays_full_games(kit: Kit, tmp_path: Path, server_address: str) -> None:
    name = kit.name
    out = tmp_path / "kit.json"
    command = shlex.join(kit.command)
    done = run_module(
        TOURNAMENT,
        *("--bots", "random", "--bot-cmd", f"{name}={command}", "--players", "2", "--games", "2"),
        *("--server", server_address, "--out", str(out), "--no-replays", "--quiet"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads(out.read_text())["games"]
    assert all(g["status"] == "finished" and not g["failures"] for g in games)
    assert all(name in g["bots"] for g in games)


def test_the_kit_bot_reads_the_error_reason(kit: Kit, server_address: str) -> None:
    done = subprocess.run(
        [*kit.command, "--server", server_address, "--game", "0000000000000000"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "(NOT_FOUND)" in done.stderr  # the ErrorInfo reason, only printed when present


def test_the_kit_bot_runs_as_a_hosted_submission_in_the_sandbox(kit: Kit, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    # The folder the author built in, as it is submitted: with its build outputs (for C++, a build/ folder
    # whose CMakeCache.txt names the folder's own path, which CMake refuses anywhere else), and for Node.js
    # its node_modules/. The runner copies it and builds it inside the sandbox from source.
    folder = tmp_path / "submissions" / kit.name
    shutil.copytree(kit.folder, folder, symlinks=True, ignore=shutil.ignore_patterns("*.key"))
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    bot = tomllib.loads((folder / "kutnahora-bot.toml").read_text())["name"]
    out = tmp_path / "hosted.json"
    done = run_module(
        TOURNAMENT,
        *("--bots", "random", "--submissions", str(folder.parent), "--players", "2", "--games", "2"),
        *("--out", str(out), "--quiet"),
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads(out.read_text())["games"]
    assert all(g["status"] == "finished" and not g["failures"] for g in games), games
    assert all(bot in g["bots"] for g in games)
    logs = "".join(p.read_text() for p in (tmp_path / "hosted.logs").glob("*.log"))
    # Each seat's log ends with the bot's own line for the game's end.
    assert logs.count("finished: seat" if kit.name == "node" else "GAME_STATUS_FINISHED: seat") == 2, logs
    # Built in the runner's own copy: the submitted folder is as it was.
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == before


def test_the_kit_bot_says_where_it_failed_to_connect(kit: Kit) -> None:
    done = subprocess.run(
        [*kit.command, "--server", "127.0.0.1:1", "--create", "--retry-for", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in (1, 2)
    assert "127.0.0.1:1" in done.stderr and "refused" in done.stderr.lower(), done.stderr


def test_the_kit_bot_help_exits_0(kit: Kit) -> None:
    done = subprocess.run([*kit.command, "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr  # Go's flag package prints its help to stderr, as -arena
    assert "-arena" in shown and "-register" in shown and "-key-file" in shown, shown
