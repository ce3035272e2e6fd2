"""The starter kits (clients/go, clients/cpp, clients/java): each built from the project's .proto files
with Debian's packages plays full games against the server, reads the ErrorInfo reason of a refused call,
and runs as a hosted submission inside the sandbox: submitted as its source folder, built there by its own
manifest (no network; the protos bound read-only at $KUTNAHORA_PROTOS).

Runs where the kit's toolchain is installed (CI installs it); skipped otherwise, saying what is missing.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clients.helpers import ROOT, run_module

TOURNAMENT = "kutnahora.clients.tournament.cli"
GO_SOURCES = Path("/usr/share/gocode/src/google.golang.org")
BUILD = ROOT / "build" / "kits"
JAVA_JARS = Path("/usr/share/java")
# What the Java kit's build and run need from Debian (build-debian.sh names them all).
JAVA_PACKAGES = {
    "grpc-netty.jar": "libgrpc-java",
    "protobuf.jar": "libprotobuf-java",
    "geronimo-annotation-1.3-spec.jar": "libgeronimo-annotation-1.3-spec-java",
    "netty-codec-http2.jar": "libnetty-java",
    "perfmark-api.jar": "libperfmark-java",
}


@dataclass(frozen=True)
class Kit:
    name: str
    command: list[str]  # runs the built bot (flags follow)


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


def build_java() -> Path:
    missing = [t for t in ("java", "javac", "jar", "protoc", "grpc_java_plugin") if shutil.which(t) is None]
    missing += [package for jar, package in JAVA_PACKAGES.items() if not (JAVA_JARS / jar).is_file()]
    if missing:
        pytest.skip(f"the Java kit's Debian packages are not installed ({', '.join(missing)})")
    done = subprocess.run(
        ["sh", str(ROOT / "clients" / "java" / "build-debian.sh"), str(BUILD / "java")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return BUILD / "java" / "kutnahora-bot.jar"


def java_run_command() -> list[str]:
    """The Java kit manifest's run command (its JVM options), without the jar's path."""
    manifest = tomllib.loads((ROOT / "clients" / "java" / "kutnahora-bot.toml").read_text())
    words = shlex.split(manifest["run"])
    return words[: words.index("-jar")]


@pytest.fixture(scope="module", params=["go", "cpp", "java"])
def kit(request: pytest.FixtureRequest) -> Kit:
    name: str = request.param
    if name == "go":
        return Kit(name, [str(build_go())])
    if name == "cpp":
        return Kit(name, [str(build_cpp())])
    return Kit(name, ["env", *java_run_command(), "-jar", str(build_java())])


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
    name = kit.name
    folder = tmp_path / "submissions" / name
    # The kit's own folder and manifest, as an author submits it: built inside the sandbox from source.
    shutil.copytree(ROOT / "clients" / kit.name, folder, ignore=shutil.ignore_patterns("build", "target"))
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
    assert all(g["status"] == "finished" and not g["failures"] for g in games)
    assert all(bot in g["bots"] for g in games)
    logs = "".join(p.read_text() for p in (tmp_path / "hosted.logs").glob("*.log"))
    assert logs.count("GAME_STATUS_FINISHED") == 2
    assert not (folder / "build").exists()  # built in the runner's own copy, not in the submitted folder
