"""The starter kits (clients/go, clients/cpp): each built from the project's .proto files with Debian's
packages plays full games against the server, reads the ErrorInfo reason of a refused call, and runs as a
hosted submission inside the sandbox.

Runs where the kit's toolchain is installed (CI installs it); skipped otherwise, saying what is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clients.helpers import ROOT, run_module

TOURNAMENT = "kutnahora.clients.tournament.cli"
GO_SOURCES = Path("/usr/share/gocode/src/google.golang.org")
BUILD = ROOT / "build" / "kits"


def build_go() -> Path:
    missing = [tool for tool in ("go", "protoc") if shutil.which(tool) is None]
    if missing or not (GO_SOURCES / "grpc").is_dir() or not (GO_SOURCES / "protobuf").is_dir():
        pytest.skip(f"the Go kit's Debian packages are not installed ({', '.join(missing) or 'sources'})")
    done = subprocess.run(
        ["sh", str(ROOT / "clients" / "go" / "build-debian.sh"), str(BUILD / "go")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return BUILD / "go" / "bot"


def build_cpp() -> Path:
    missing = [
        t for t in ("cmake", "c++", "protoc", "grpc_cpp_plugin", "pkg-config") if shutil.which(t) is None
    ]
    if missing:
        pytest.skip(f"the C++ kit's Debian packages are not installed ({', '.join(missing)})")
    folder = BUILD / "cpp"
    for command in (
        ["cmake", "-S", str(ROOT / "clients" / "cpp"), "-B", str(folder), "-DCMAKE_BUILD_TYPE=Release"],
        ["cmake", "--build", str(folder), "-j2"],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return folder / "kutnahora-bot"


@pytest.fixture(scope="module", params=["go", "cpp"])
def kit(request: pytest.FixtureRequest) -> tuple[str, Path]:
    name: str = request.param
    return name, build_go() if name == "go" else build_cpp()


def test_the_kit_bot_plays_full_games(kit: tuple[str, Path], tmp_path: Path, server_address: str) -> None:
    name, bot = kit
    out = tmp_path / "kit.json"
    done = run_module(
        TOURNAMENT,
        *("--bots", "random", "--bot-cmd", f"{name}={bot}", "--players", "2", "--games", "2"),
        *("--server", server_address, "--out", str(out), "--no-replays", "--quiet"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads(out.read_text())["games"]
    assert all(g["status"] == "finished" and not g["failures"] for g in games)
    assert all(name in g["bots"] for g in games)


def test_the_kit_bot_reads_the_error_reason(kit: tuple[str, Path], server_address: str) -> None:
    done = subprocess.run(
        [str(kit[1]), "--server", server_address, "--game", "0000000000000000"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "(NOT_FOUND)" in done.stderr  # the ErrorInfo reason, only printed when present


def test_the_kit_bot_runs_as_a_hosted_submission_in_the_sandbox(
    kit: tuple[str, Path], tmp_path: Path
) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    name, bot = kit
    folder = tmp_path / "submissions" / name
    folder.mkdir(parents=True)
    shutil.copy(bot, folder / "bot")
    (folder / "kutnahora-bot.toml").write_text(f'name = "{name}"\nlanguage = "{name}"\nrun = "./bot"\n')
    out = tmp_path / "hosted.json"
    done = run_module(
        TOURNAMENT,
        *("--bots", "random", "--submissions", str(folder.parent), "--players", "2", "--games", "2"),
        *("--out", str(out), "--quiet"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads(out.read_text())["games"]
    assert all(g["status"] == "finished" and not g["failures"] for g in games)
    logs = "".join(p.read_text() for p in (tmp_path / "hosted.logs").glob("*.log"))
    assert logs.count("GAME_STATUS_FINISHED") == 2
