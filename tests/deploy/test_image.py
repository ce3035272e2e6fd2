"""The built image, run: a smoke test of what an operator relies on, with podman (or docker).

It runs only where ``KUTNAHORA_TEST_IMAGE`` names a built image (``.ci/run`` builds one with podman on the
stand-in base and sets it) and the engine (``KUTNAHORA_TEST_ENGINE``, default podman) can start a
container; otherwise every test skips and says why. One container serves the first tests, as an operator
would run it: the gRPC and metrics ports published on the host's loopback, a named volume for the SQLite
store, a read-only root file system with a tmpfs on /tmp, every capability dropped. From the host a greedy
bot plays a game through the published port; /metrics answers; the image's HEALTHCHECK passes; the server
runs as uid 10001 and cannot write its root. Then the container is stopped (timed: SIGTERM must end it
gracefully, well within the grace period, with exit code 0) and a new one on the same volume still has the
finished game. Last, two containers on the tests' PostgreSQL (host networking, a schema of their own) play
one game between them: one bot creates it through the first, the other joins through the second.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.request import urlopen

import grpc
import pytest

from kutnahora.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc
from tests.deploy.servers import ROOT
from tests.store.pg import fresh_schema

IMAGE = os.environ.get("KUTNAHORA_TEST_IMAGE", "")
ENGINE = os.environ.get("KUTNAHORA_TEST_ENGINE", "podman")
STOP_SECONDS = 10.0
"""How long a graceful stop of an idle server may take (its grace period for calls in flight is 20 s)."""


def engine(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs the container engine; a failure shows its output."""
    result = subprocess.run([ENGINE, *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"{ENGINE} {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


@pytest.fixture(scope="module")
def image() -> str:
    """The image under test, or a skip saying why there is none to run."""
    if not IMAGE:
        pytest.skip("KUTNAHORA_TEST_IMAGE is not set: no built image to run (.ci/run builds one with podman)")
    if shutil.which(ENGINE) is None:
        pytest.skip(f"{ENGINE} is not installed (KUTNAHORA_TEST_ENGINE names the container engine)")
    if engine("image", "exists", IMAGE, check=False).returncode != 0 and ENGINE == "podman":
        pytest.fail(f"KUTNAHORA_TEST_IMAGE={IMAGE} names no image {ENGINE} has")
    return IMAGE


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Container:
    """A server container started by a test: its name and its gRPC and metrics addresses on the host."""

    name: str
    address: str
    metrics: str

    def logs(self) -> str:
        result = engine("logs", self.name, check=False)
        return result.stdout + result.stderr


def wait_healthy(container: Container, timeout: float = 90) -> None:
    """Waits until the image's own HEALTHCHECK passes in the container."""
    deadline = time.monotonic() + timeout
    while True:
        running = engine("inspect", "--format", "{{.State.Running}}", container.name, check=False)
        if running.stdout.strip() != "true":
            raise AssertionError(f"{container.name} is not running:\n{container.logs()}")
        if engine("healthcheck", "run", container.name, check=False, timeout=30).returncode == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{container.name} never became healthy:\n{container.logs()}")
        time.sleep(1)


def start(image: str, name: str, volume: str, *extra: str) -> Container:
    """Starts a server container as an operator would: published on loopback, locked down, a volume."""
    grpc_port, metrics_port = free_port(), free_port()
    engine(
        "run", "--detach", "--name", name,
        "--publish", f"127.0.0.1:{grpc_port}:50051", "--publish", f"127.0.0.1:{metrics_port}:9464",
        "--volume", f"{volume}:/var/lib/kutnahora",
        "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        *extra, image,
    )  # fmt: skip
    container = Container(name, f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{metrics_port}/metrics")
    wait_healthy(container)
    return container


def remove(*names: str) -> None:
    """Removes containers and their anonymous volumes (a removal racing podman's own cleanup is retried)."""
    for name in names:
        for _ in range(5):
            engine("rm", "--force", "--volumes", "--time", "1", name, check=False)
            if engine("container", "exists", name, check=False).returncode != 0:
                break
            time.sleep(1)


def game_summary(address: str, game_id: str) -> game_pb2.GameSummary:
    with grpc.insecure_channel(address) as channel:
        response = game_service_pb2_grpc.GameServiceStub(channel).GetGame(
            game_service_pb2.GetGameRequest(game_id=game_id), timeout=10
        )
    summary: game_pb2.GameSummary = response.game
    return summary


BOT = (sys.executable, "-m", "kutnahora.clients.bots.cli", "greedy")


def bot(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """The host's greedy bot (this checkout's), playing through a published port."""
    return subprocess.run(
        [*BOT, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


GAME_LINE = re.compile(r"Created game (\w+)")


@dataclass
class Served:
    """The first container, its volume, and the game a bot played on it."""

    container: Container
    volume: str
    game_id: str
    bot_output: str


@pytest.fixture(scope="module")
def served(image: str) -> Iterator[Served]:
    suffix = uuid.uuid4().hex[:8]
    volume = f"kutnahora-test-{suffix}"
    names = [f"kutnahora-test-{suffix}", f"kutnahora-test-{suffix}-again"]
    engine("volume", "create", volume)
    try:
        container = start(image, names[0], volume)
        played = bot("--server", container.address, "--create", "--players", "2", "--fill")
        assert played.returncode == 0, played.stdout + played.stderr + container.logs()
        match = GAME_LINE.search(played.stdout)
        assert match is not None, played.stdout
        yield Served(container, volume, match.group(1), played.stdout)
    finally:
        remove(*names)
        engine("volume", "rm", "--force", volume, check=False)


def test_the_version_line_names_the_compiled_build_and_the_native_core(image: str) -> None:
    result = engine("run", "--rm", image, "--version")
    line = result.stdout.strip()
    every_module = r"compiled: (\d+) of \1 modules"
    engine_part = r"games played by the python engine, native core built, KUTNAHORA_ENGINE selects native"
    assert re.fullmatch(
        rf"kutnahora-server \S+ \(rules version \d+, {every_module}; {engine_part}\)", line
    ), line
    python = engine("run", "--rm", "-e", "KUTNAHORA_ENGINE=python", image, "--version").stdout.strip()
    assert python.endswith("native core built, KUTNAHORA_ENGINE selects python)"), python


def test_the_image_runs_as_a_user_with_a_health_check(image: str) -> None:
    (config,) = json.loads(engine("image", "inspect", image).stdout)
    user = config["Config"]["User"]
    assert user.split(":")[0] == "10001"
    # Podman keeps HEALTHCHECK only in the docker format (--format docker); the OCI format drops it.
    healthcheck = config.get("Healthcheck") or config["Config"].get("Healthcheck")  # podman's, docker's
    assert healthcheck and "kutnahora.server.healthcheck" in " ".join(healthcheck["Test"])
    assert config["Config"]["Entrypoint"] == ["kutnahora-server"]
    print(f"{image}: {config['Size'] / 1e6:.0f} MB")


def test_a_greedy_bot_on_the_host_plays_a_game_through_the_published_port(served: Served) -> None:
    assert f"Game {served.game_id} finished." in served.bot_output
    summary = game_summary(served.container.address, served.game_id)
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    assert len(summary.result.seats) == 2


def test_metrics_are_served_and_count_the_game(served: Served) -> None:
    with urlopen(served.container.metrics, timeout=10) as response:
        text = response.read().decode()
    assert re.search(r'kutnahora_build_info\{[^}]*compiled="true"', text), text[:2000]

    def total(name: str) -> float:
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))

    assert total("kutnahora_decisions_applied_total") > 0, "no decision counted"
    assert total("kutnahora_games_ended_total") >= 1, "the finished game is not counted"


def test_the_health_check_passes_and_the_server_is_not_root(served: Served) -> None:
    name = served.container.name
    health = engine("exec", name, "python", "-m", "kutnahora.server.healthcheck", "--timeout", "3")
    assert "SERVING" in health.stdout
    assert engine("exec", name, "id", "-u").stdout.strip() == "10001"
    status = engine("exec", name, "cat", "/proc/1/status").stdout
    assert re.search(r"^Uid:\s+10001\s", status, re.MULTILINE), status
    assert re.search(r"^CapEff:\s+0+$", status, re.MULTILINE), status


def test_the_root_is_read_only_but_tmp_and_the_volume_are_writable(served: Served) -> None:
    name = served.container.name
    refused = engine("exec", name, "touch", "/opt/kutnahora/written", check=False)
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr, refused.stderr
    engine("exec", name, "touch", "/tmp/written")
    listing = engine("exec", name, "ls", "/var/lib/kutnahora").stdout.split()
    assert "kutnahora.db" in listing


def test_a_stop_is_graceful_and_the_volume_keeps_the_game(image: str, served: Served) -> None:
    name = served.container.name
    started = time.monotonic()
    engine("stop", "--time", "30", name)
    seconds = time.monotonic() - started
    state = json.loads(engine("inspect", "--format", "{{json .State}}", name).stdout)
    logs = served.container.logs()
    print(f"graceful stop: {seconds:.1f} s (exit code {state['ExitCode']})")
    assert state["ExitCode"] == 0, logs[-3000:]
    assert '"server stopped"' in logs, logs[-3000:]
    assert seconds < STOP_SECONDS
    again = start(image, f"{name}-again", served.volume)
    summary = game_summary(again.address, served.game_id)
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    assert summary.version > 0


@contextlib.contextmanager
def on_postgres(image: str, url: str, count: int) -> Iterator[list[Container]]:
    """``count`` containers on the host's network, sharing the database at ``url``."""
    suffix = uuid.uuid4().hex[:8]
    started: list[Container] = []
    try:
        for index in range(count):
            grpc_port, metrics_port = free_port(), free_port()
            name = f"kutnahora-test-pg-{suffix}-{index}"
            engine(
                "run", "--detach", "--name", name, "--network", "host",
                "--env", f"KUTNAHORA_DB={url}", "--env", "KUTNAHORA_HOST=127.0.0.1",
                "--env", f"KUTNAHORA_PORT={grpc_port}", "--env", "KUTNAHORA_METRICS_HOST=127.0.0.1",
                "--env", f"KUTNAHORA_METRICS_PORT={metrics_port}",
                "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", image,
            )  # fmt: skip
            container = Container(name, f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{metrics_port}/metrics")
            started.append(container)
        for container in started:
            wait_healthy(container)
        yield started
    finally:
        remove(*(container.name for container in started))


def test_two_containers_on_postgresql_play_one_game_between_them(image: str) -> None:
    with fresh_schema("kh_image") as url, on_postgres(image, url, 2) as (first, second):
        creator = subprocess.Popen(
            [*BOT, "--server", first.address, "--create", "--players", "2"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert creator.stdout is not None
            line = creator.stdout.readline()
            match = GAME_LINE.search(line)
            assert match is not None, line + creator.stdout.read()
            game_id = match.group(1)
            joiner = bot("--server", second.address, "--game", game_id)
            rest = creator.communicate(timeout=120)[0]
        finally:
            if creator.poll() is None:
                creator.kill()
        assert joiner.returncode == 0, joiner.stdout + joiner.stderr + second.logs()
        assert creator.returncode == 0, rest + first.logs()
        assert f"Game {game_id} finished." in joiner.stdout and f"Game {game_id} finished." in rest
        for container in (first, second):
            summary = game_summary(container.address, game_id)
            assert summary.status == game_pb2.GAME_STATUS_FINISHED, container.name
        assert game_summary(first.address, game_id) == game_summary(second.address, game_id)
