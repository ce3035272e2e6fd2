"""The starter kits (clients/go, cpp, java, node) as an author meets them: each README's marked command
blocks, and one build of each kit per test session made by running its README's build block.

A README marks the blocks a test runs with an HTML comment on the line before a fenced ``sh`` block::

    <!-- test: build -->
    ```sh
    sh build-debian.sh build
    ```

The kinds: ``packages`` (the Debian packages the kit needs: checked to be installed, not installed),
``build`` (run once per session, in a copy of the kit laid out as in the repository under
``build/kits/<kit>/``, so that a second session builds incrementally), ``server`` (run with a game
server listening where the block says ``localhost:50051``) and ``arena`` (run with an arena, with a
house bot, where it says ``localhost:50061``). Blocks run with ``sh -e`` in the kit's folder, top to
bottom. Unmarked blocks (playing a person, a hosted submission, the routes that need a registry) are
not run here; tests/clients/test_kits.py runs each kit as a hosted submission.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clients.helpers import ROOT

KITS = ("go", "cpp", "java", "node")
BUILD = ROOT / "build" / "kits"
GO_SOURCES = Path("/usr/share/gocode/src/google.golang.org")
JAVA_JARS = Path("/usr/share/java")
# What the Java kit's build and run need from Debian (build-debian.sh names them all).
JAVA_PACKAGES = {
    "grpc-netty.jar": "libgrpc-java",
    "protobuf.jar": "libprotobuf-java",
    "geronimo-annotation-1.3-spec.jar": "libgeronimo-annotation-1.3-spec-java",
    "netty-codec-http2.jar": "libnetty-java",
    "perfmark-api.jar": "libperfmark-java",
}
TOOLS = {
    "go": ("go", "protoc"),
    "cpp": ("cmake", "c++", "protoc", "grpc_cpp_plugin", "pkg-config"),
    "java": ("java", "javac", "jar", "protoc", "grpc_java_plugin"),
    "node": ("node", "npm"),
}
# Where each README's build puts the bot, in the kit's folder.
BUILT = {
    "go": "build/bot",
    "cpp": "build/kutnahora-cpp-bot",
    "java": "build/kutnahora-bot.jar",
    "node": "node_modules/@grpc/grpc-js",
}
MARKED = re.compile(r"^<!-- test: (\w+) -->\n```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
BLOCK_KINDS = {"packages", "build", "run", "server", "arena"}


@dataclass(frozen=True)
class Block:
    kind: str
    text: str


@dataclass(frozen=True)
class Kit:
    name: str
    folder: Path  # the kit's built copy
    command: list[str]  # runs the built bot (flags follow)


def readme_blocks(kit: str) -> list[Block]:
    """The marked command blocks of a kit's README, in order."""
    text = (ROOT / "clients" / kit / "README.md").read_text(encoding="utf-8")
    blocks = [Block(kind, body) for kind, body in MARKED.findall(text)]
    unknown = {b.kind for b in blocks} - BLOCK_KINDS
    assert not unknown, f"clients/{kit}/README.md marks blocks of unknown kinds {sorted(unknown)}"
    return blocks


def debian_packages(block: Block) -> list[str]:
    """The package names an ``apt-get install`` block names."""
    words = shlex.split(block.text.replace("\\\n", " "))
    names: list[str] = []
    for command in " ".join(words).split("&&"):
        parts = command.split()
        if "install" in parts:
            names += [w for w in parts[parts.index("install") + 1 :] if not w.startswith("-")]
    return names


def skip_unless_toolchain(kit: str) -> None:
    """Skip the test when the kit's toolchain (which .ci/run installs) is missing, saying what is."""
    missing = [tool for tool in TOOLS[kit] if shutil.which(tool) is None]
    if kit == "go" and (not (GO_SOURCES / "grpc").is_dir() or not (GO_SOURCES / "protobuf").is_dir()):
        missing.append("golang-google-grpc-dev, golang-google-protobuf-dev")
    if kit == "java":
        missing += [package for jar, package in JAVA_PACKAGES.items() if not (JAVA_JARS / jar).is_file()]
    if missing:
        pytest.skip(f"the {kit} kit's toolchain is not installed ({', '.join(missing)})")


def kit_environment() -> dict[str, str]:
    """The environment the README's commands run in (this Python's commands first on PATH)."""
    return dict(os.environ)


def run_block(block: Block, folder: Path, timeout: float, replace: dict[str, str] | None = None) -> str:
    """Run one README block with ``sh -e`` in ``folder``; returns its output (stdout and stderr)."""
    text = block.text
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    done = subprocess.run(
        ["sh", "-e", "-c", text],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=kit_environment(),
        check=False,
    )
    output = done.stdout + done.stderr
    failed = f"this {block.kind} block failed (exit {done.returncode}):\n{text}\n{output[-4000:]}"
    assert done.returncode == 0, failed
    return output


GENERATED = ("build", "build-hosted", "target", "node_modules", "kutnahorav1")


def sources_digest(kit: str) -> str:
    """The SHA-256 of what a kit's build is made from: its sources (not what a build generates) and the
    protos."""
    digest = hashlib.sha256()
    for top in (ROOT / "clients" / kit, ROOT / "protos"):
        for path in sorted(top.rglob("*")):
            relative = path.relative_to(top)
            if path.is_file() and not set(relative.parts) & set(GENERATED) and path.suffix != ".key":
                digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def fresh_copy(kit: str) -> Path:
    """The kit's sources copied to build/kits/<kit>/clients/<kit> with the protos beside, as in the
    repository; what earlier sessions built there (its build folders) is kept."""
    top = BUILD / kit
    folder = top / "clients" / kit
    shutil.copytree(
        ROOT / "clients" / kit, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*GENERATED, "*.key")
    )
    shutil.copytree(ROOT / "protos", top / "protos", dirs_exist_ok=True)
    return folder


@functools.cache
def _built(kit: str) -> Path:
    # One build at a time per kit across processes (test runs side by side, or pytest-xdist's workers):
    # the others wait for it. A build of the same sources is not made again: the folder is in use by the
    # processes that built it first (a second `npm ci` would empty node_modules under a running bot).
    BUILD.mkdir(parents=True, exist_ok=True)
    folder = BUILD / kit / "clients" / kit
    stamp = BUILD / f".{kit}.built"
    with (BUILD / f".{kit}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = sources_digest(kit)
        if not (stamp.exists() and stamp.read_text() == wanted and (folder / BUILT[kit]).exists()):
            stamp.unlink(missing_ok=True)
            folder = fresh_copy(kit)
            for block in readme_blocks(kit):
                if block.kind == "build":
                    run_block(block, folder, timeout=1800)
            stamp.write_text(wanted)
    assert (folder / BUILT[kit]).exists(), f"the {kit} README's build did not make {BUILT[kit]}"
    return folder


def build_kit(kit: str) -> Kit:
    """The kit built by its README's build block (once per session), and the command that runs it."""
    skip_unless_toolchain(kit)
    folder = _built(kit)
    built = str(folder / BUILT[kit])
    if kit == "java":
        return Kit(kit, folder, ["env", *java_run_options(), "-jar", built])
    if kit == "node":
        return Kit(kit, folder, ["node", str(folder / "bot.js")])
    return Kit(kit, folder, [built])


def java_run_options() -> list[str]:
    """The Java kit manifest's run command (its JVM options), without the jar's path."""
    manifest = tomllib.loads((ROOT / "clients" / "java" / "kutnahora-bot.toml").read_text())
    words = shlex.split(manifest["run"])
    return words[: words.index("-jar")]
