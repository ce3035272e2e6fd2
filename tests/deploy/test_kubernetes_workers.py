"""The sandbox workers' manifests (deploy/kubernetes/workers/), their image (the Dockerfile's ``worker``
stage) and their compose service agree with each other and with ``kutnahora-arena-worker``."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from kutnahora.worker.options import build_parser
from kutnahora.worker.worker import STOP_SECONDS
from tests.deploy.kustomize import render
from tests.deploy.promql import DEPLOY

WORKERS = DEPLOY / "kubernetes" / "workers"
ROOT = DEPLOY.parent


def document(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((WORKERS / name).read_text())
    return loaded


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(only)


def test_the_worker_reads_its_token_from_the_secret() -> None:
    deployment, secret = document("deployment.yaml"), document("secret.yaml")
    worker = container(deployment)
    args = build_parser().parse_args(worker["args"])
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    (mount,) = [m for m in worker["volumeMounts"] if m["mountPath"] == str(args.worker_token_file.parent)]
    assert mount.get("readOnly") is True
    assert volumes[mount["name"]]["secret"]["secretName"] == secret["metadata"]["name"]
    assert args.worker_token_file.name in secret["stringData"]


def test_the_worker_writes_only_to_its_volumes() -> None:
    deployment = document("deployment.yaml")
    worker = container(deployment)
    args = build_parser().parse_args(worker["args"])
    mounts = {m["mountPath"]: m["name"] for m in worker["volumeMounts"]}
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert worker["securityContext"]["readOnlyRootFilesystem"] is True
    assert {str(args.work), "/tmp", str(args.sandbox_runtime)} <= set(mounts)
    # The user id leases are shared by every worker of the node.
    assert volumes[mounts[str(args.sandbox_runtime)]]["hostPath"]["path"] == str(args.sandbox_runtime)


def test_the_sandbox_gets_what_it_needs_and_the_pod_says_why() -> None:
    worker = container(document("deployment.yaml"))
    args = build_parser().parse_args(worker["args"])
    assert args.sandbox == "bwrap"
    assert worker["securityContext"]["privileged"] is True and worker["securityContext"]["runAsUser"] == 0
    comments = (WORKERS / "deployment.yaml").read_text()
    for need in ("bubblewrap", "cgroup", "user id", "tmpfs"):
        assert need in comments


def test_metrics_and_liveness_use_the_metrics_port() -> None:
    worker = container(document("deployment.yaml"))
    args = build_parser().parse_args(worker["args"])
    (port,) = worker["ports"]
    assert port["name"] == "metrics" and port["containerPort"] == args.metrics_port
    assert worker["livenessProbe"]["httpGet"] == {"path": "/metrics", "port": "metrics"}


def test_the_grace_period_leaves_the_worker_time_to_stop() -> None:
    spec = document("deployment.yaml")["spec"]["template"]["spec"]
    assert spec["terminationGracePeriodSeconds"] > STOP_SECONDS


def test_the_memory_limit_holds_every_seat() -> None:
    worker = container(document("deployment.yaml"))
    args = build_parser().parse_args(worker["args"])
    limit = worker["resources"]["limits"]["memory"]
    assert limit.endswith("Gi")
    assert int(limit[:-2]) * 1024 > args.seats * args.bot_memory


def test_the_image_is_the_dockerfiles_worker_stage() -> None:
    kustomization = yaml.safe_load((WORKERS / "kustomization.yaml").read_text())
    (entry,) = kustomization["images"]
    worker = container(document("deployment.yaml"))
    assert worker["image"].rsplit(":", 1)[0] == entry["name"]
    (rendered,) = [doc for doc in render(WORKERS) if doc["kind"] == "Deployment"]
    assert container(rendered)["image"] == f"{entry['newName']}:{entry['newTag']}"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    stage = dockerfile.split("AS worker\n", 1)[1].split("\nFROM ", 1)[0]
    assert "bubblewrap" in stage
    assert 'ENTRYPOINT ["kutnahora-arena-worker"]' in stage
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kutnahora-arena-worker"] == "kutnahora.worker.main:main"
    last = dockerfile.rsplit("\nFROM ", 1)[1]
    assert last.startswith("${BASE_IMAGE} AS runtime")  # a plain build still makes the server's image


def test_the_compose_service_runs_the_worker_image_with_its_token() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    service = compose["services"]["arena-worker"]
    assert service["profiles"] == ["hosting"]
    assert service["build"]["target"] == "worker"
    assert service["privileged"] is True
    args = build_parser().parse_args(service["command"])
    assert args.worker_token_file == Path("/run/secrets/worker_token")
    assert service["secrets"] == ["worker_token"] and "worker_token" in compose["secrets"]
    (volume,) = service["volumes"]
    assert volume.split(":")[1] == str(args.work)
    assert re.fullmatch(r"\d+s", service["stop_grace_period"])
    assert int(service["stop_grace_period"][:-1]) > STOP_SECONDS


@pytest.mark.parametrize("version", ("1.27.0", "1.37.0"))
def test_the_manifests_validate_against_the_kubernetes_schemas(version: str) -> None:
    validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is not installed")
    rendered = render(WORKERS)
    assert sorted(doc["kind"] for doc in rendered) == ["Deployment", "Secret"]
    for doc in rendered:
        assert doc["metadata"]["namespace"] == "kutnahora"
        validate.validate(doc, version, strict=True)
