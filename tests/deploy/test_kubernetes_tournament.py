"""The tournament's Kubernetes manifests (deploy/kubernetes/tournament/): an Indexed Job of shards and the
merge Job agree with each other, with the game servers' Service and with ``kutnahora-tournament``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kutnahora.clients.tournament.cli import build_parser
from kutnahora.clients.tournament.merge import build_parser as merge_parser
from kutnahora.clients.tournament.merge import parse_shard
from tests.deploy.promql import DEPLOY

TOURNAMENT = DEPLOY / "kubernetes" / "tournament"
SERVICE = DEPLOY / "kubernetes" / "service.yaml"


def document(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((TOURNAMENT / name).read_text())
    return loaded


def container(job: dict[str, Any]) -> dict[str, Any]:
    (only,) = job["spec"]["template"]["spec"]["containers"]
    return dict(only)


def shard_args(index: int) -> list[str]:
    args = container(document("job.yaml"))["args"]
    return [a.replace("$(JOB_COMPLETION_INDEX)", str(index)) for a in args]


def test_the_shard_job_is_indexed_with_one_pod_per_shard() -> None:
    job = document("job.yaml")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    count = spec["completions"]
    for index in range(count):
        args = build_parser().parse_args(shard_args(index))
        assert parse_shard(args.shard) == (index, count)
        assert args.out == Path(f"/results/shard-{index}.json")
        assert args.resume and args.no_replays
    (env,) = [e for e in container(job)["env"] if e["name"] == "JOB_COMPLETION_INDEX"]
    path = env["valueFrom"]["fieldRef"]["fieldPath"]
    assert path == "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def test_the_shards_play_against_the_servers_service() -> None:
    (service,) = [
        s for s in yaml.safe_load_all(SERVICE.read_text()) if s and s["metadata"]["name"] == "kutnahora"
    ]
    ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    args = build_parser().parse_args(shard_args(0))
    assert args.server == f"{service['metadata']['name']}:{ports['grpc']}"


def test_the_merge_job_reads_every_shard_from_the_same_volume() -> None:
    job, merge, claim = document("job.yaml"), document("merge/merge-job.yaml"), document("pvc.yaml")
    count = job["spec"]["completions"]
    args = container(merge)["args"]
    assert args[0] == "merge"
    parsed = merge_parser().parse_args(args[1:])
    assert parsed.shards == [Path(f"/results/shard-{i}.json") for i in range(count)]
    for each in (job, merge):
        (volume,) = [v for v in each["spec"]["template"]["spec"]["volumes"] if v["name"] == "results"]
        assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
        (mount,) = [m for m in container(each)["volumeMounts"] if m["name"] == "results"]
        assert mount["mountPath"] == "/results"
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]


def test_the_pods_run_unprivileged() -> None:
    for name in ("job.yaml", "merge/merge-job.yaml"):
        job = document(name)
        spec = job["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["restartPolicy"] == "Never"
        security = container(job)["securityContext"]
        assert security["allowPrivilegeEscalation"] is False and security["readOnlyRootFilesystem"] is True


def test_the_manifests_validate_against_the_kubernetes_schemas() -> None:
    validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is not installed")
    for name in ("job.yaml", "merge/merge-job.yaml", "pvc.yaml"):
        validate.validate(document(name), "1.30.0", strict=True)


def test_kustomize_builds_the_shards_and_the_volume(tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    result = subprocess.run(
        [kubectl, "kustomize", str(TOURNAMENT)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    built = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert sorted(doc["kind"] for doc in built) == ["Job", "PersistentVolumeClaim"]
    assert {doc["metadata"]["namespace"] for doc in built} == {"kutnahora"}
