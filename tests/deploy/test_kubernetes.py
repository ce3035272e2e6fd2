"""The Kubernetes manifests: they parse, reference each other consistently, and match the server.

Without a cluster this is as far as checking goes: every document parses; labels and selectors line up
(Deployment, Services, PodDisruptionBudget, ServiceMonitor); named ports exist where they are referenced;
the probes use gRPC health on the port the server is configured to listen on; every KUTNAHORA_* variable
is one the server reads; the HPA scales the Deployment. Every manifest file under deploy/kubernetes/ (a
tournament Job added later included) must be listed by a kustomization; each kustomization is rendered
(``kubectl kustomize`` where kubectl is installed, else by the small renderer in tests/deploy/kustomize.py,
which the first is checked against) and every rendered object of the Kubernetes API is validated against
the API's schemas, strictly (no unknown fields), for the oldest and the newest Kubernetes versions checked.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest
import yaml

from tests.deploy.kustomize import (
    KUBERNETES,
    kustomizations,
    listed_files,
    manifest_files,
    render,
    render_with_kubectl,
)
from tests.deploy.promql import DEPLOY

KUBERNETES_VERSIONS = ("1.27.0", "1.37.0")
"""The oldest Kubernetes the manifests support (autoscaling/v2, policy/v1, gRPC probes) and the newest
kubernetes-validate has schemas for."""
CUSTOM_GROUPS = ("monitoring.coreos.com",)
"""API groups of custom resources (the Prometheus Operator's): the Kubernetes API has no schema for them."""


def load_all() -> dict[tuple[str, str], dict[str, Any]]:
    """Every manifest of the server (deploy/kubernetes/kustomization.yaml's), by (kind, name); the
    tournament's and the sandbox workers' have tests of their own."""
    documents: dict[tuple[str, str], dict[str, Any]] = {}
    for path in listed_files(KUBERNETES / "kustomization.yaml"):
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                key = (document["kind"], document["metadata"]["name"])
                assert key not in documents, f"{key} defined twice"
                documents[key] = document
    return documents


@pytest.fixture(scope="module")
def manifests() -> dict[tuple[str, str], dict[str, Any]]:
    return load_all()


def one(manifests: dict[tuple[str, str], dict[str, Any]], kind: str) -> dict[str, Any]:
    (document,) = [doc for (k, _), doc in manifests.items() if k == kind]
    return document


def services(manifests: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    return [doc for (kind, _), doc in manifests.items() if kind == "Service"]


def container(manifests: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    (server,) = one(manifests, "Deployment")["spec"]["template"]["spec"]["containers"]
    return dict(server)


def server_environment() -> set[str]:
    """The KUTNAHORA_* variables kutnahora-server reads (one per declared setting)."""
    from kutnahora.server.config import ServerConfig
    from kutnahora.server.settings import declared

    return {item.setting.variable for item in declared(ServerConfig)}


def test_every_manifest_is_listed_in_a_kustomization(
    manifests: dict[tuple[str, str], dict[str, Any]],
) -> None:
    assert (KUBERNETES / "kustomization.yaml") in kustomizations()
    listed = {path for kustomization in kustomizations() for path in listed_files(kustomization)}
    unlisted = sorted(str(path.relative_to(KUBERNETES)) for path in set(manifest_files()) - listed)
    assert not unlisted, f"manifests no kustomization lists: {unlisted}"
    missing = sorted(str(path) for path in listed if not path.exists())
    assert not missing, f"kustomizations list files that do not exist: {missing}"
    kinds = {kind for kind, _ in manifests}
    expected = {
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "ConfigMap",
        "Secret",
    }
    assert expected | {"ServiceMonitor", "PrometheusRule"} <= kinds


def test_selectors_match_the_pods(manifests: dict[tuple[str, str], dict[str, Any]]) -> None:
    deployment = one(manifests, "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= pod_labels.items()
    for service in services(manifests):
        assert service["spec"]["selector"].items() <= pod_labels.items(), service["metadata"]["name"]
    pdb = one(manifests, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == selector
    for constraint in deployment["spec"]["template"]["spec"].get("topologySpreadConstraints", []):
        assert constraint["labelSelector"]["matchLabels"].items() <= pod_labels.items()


def test_services_name_ports_the_container_has(manifests: dict[tuple[str, str], dict[str, Any]]) -> None:
    ports = {port["name"]: port["containerPort"] for port in container(manifests)["ports"]}
    assert set(ports) == {"grpc", "metrics"}
    for service in services(manifests):
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, (service["metadata"]["name"], port)
            assert port["port"] == ports[port["targetPort"]]


def test_the_service_monitor_scrapes_the_metrics_port_of_one_service(
    manifests: dict[tuple[str, str], dict[str, Any]],
) -> None:
    monitor = one(manifests, "ServiceMonitor")
    wanted = monitor["spec"]["selector"]["matchLabels"]
    selected = [s for s in services(manifests) if wanted.items() <= s["metadata"]["labels"].items()]
    assert [s["metadata"]["name"] for s in selected] == ["kutnahora"], (
        "scrape each pod once, through one Service"
    )
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in selected[0]["spec"]["ports"]}
    assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"
    # The job label is the Service's name, which the alert rules select.
    rules = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    assert f'job="{selected[0]["metadata"]["name"]}"' in rules


def test_probes_use_grpc_health_on_the_configured_port(
    manifests: dict[tuple[str, str], dict[str, Any]],
) -> None:
    server = container(manifests)
    config = one(manifests, "ConfigMap")["data"]
    ports = {port["name"]: port["containerPort"] for port in server["ports"]}
    assert int(config["KUTNAHORA_PORT"]) == ports["grpc"]
    assert int(config["KUTNAHORA_METRICS_PORT"]) == ports["metrics"]
    assert config["KUTNAHORA_HOST"] == config["KUTNAHORA_METRICS_HOST"] == "0.0.0.0"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert server[probe]["grpc"]["port"] == ports["grpc"], probe
    assert server["resources"]["requests"]["cpu"] and server["resources"]["requests"]["memory"]


def test_the_environment_is_what_the_server_reads(manifests: dict[tuple[str, str], dict[str, Any]]) -> None:
    known = server_environment()
    config = one(manifests, "ConfigMap")
    secret = one(manifests, "Secret")
    server = container(manifests)
    references = {ref.get("configMapRef", ref.get("secretRef"))["name"] for ref in server["envFrom"]}
    assert references == {config["metadata"]["name"], secret["metadata"]["name"]}
    for key in [*config["data"], *secret["stringData"]]:
        assert key in known, f"{key} is not a variable kutnahora-server reads"
    assert secret["stringData"]["KUTNAHORA_DB"].startswith("postgresql://")
    assert "KUTNAHORA_DB" not in config["data"], "the database URL holds a password: it belongs in the Secret"


def test_shutdown_fits_in_the_grace_period(manifests: dict[tuple[str, str], dict[str, Any]]) -> None:
    spec = one(manifests, "Deployment")["spec"]["template"]["spec"]
    server = container(manifests)
    pre_stop = server["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    drain = float(one(manifests, "ConfigMap")["data"]["KUTNAHORA_GRACE"])
    assert spec["terminationGracePeriodSeconds"] > drain + float(pre_stop[1])


def test_the_autoscaler_and_the_budget_leave_room(manifests: dict[tuple[str, str], dict[str, Any]]) -> None:
    deployment = one(manifests, "Deployment")
    hpa = one(manifests, "HorizontalPodAutoscaler")
    pdb = one(manifests, "PodDisruptionBudget")
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert target["apiVersion"] == deployment["apiVersion"]
    assert 2 <= hpa["spec"]["minReplicas"] <= deployment["spec"]["replicas"] <= hpa["spec"]["maxReplicas"]
    assert (
        pdb["spec"].get("maxUnavailable", 0) >= 1 or pdb["spec"]["minAvailable"] < hpa["spec"]["minReplicas"]
    )
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"  # needs the container's CPU request
    assert container(manifests)["resources"]["requests"]["cpu"]


def test_the_pods_run_unprivileged(manifests: dict[tuple[str, str], dict[str, Any]]) -> None:
    spec = one(manifests, "Deployment")["spec"]["template"]["spec"]
    server = container(manifests)
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] == 10001  # the Dockerfile's user
    assert server["securityContext"]["allowPrivilegeEscalation"] is False
    assert server["securityContext"]["readOnlyRootFilesystem"] is True
    mounts = {mount["mountPath"] for mount in server["volumeMounts"]}
    assert {"/tmp", "/var/lib/kutnahora"} <= mounts


def test_the_kustomization_says_where_the_image_comes_from(
    manifests: dict[tuple[str, str], dict[str, Any]],
) -> None:
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    image = container(manifests)["image"]
    name = image.split("@")[0].rsplit(":", 1)[0]
    (entry,) = [entry for entry in kustomization["images"] if entry["name"] == name]
    (rendered,) = [doc for doc in render(KUBERNETES) if doc["kind"] == "Deployment"]
    (server,) = rendered["spec"]["template"]["spec"]["containers"]
    assert server["image"] == f"{entry.get('newName', name)}:{entry['newTag']}"


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_the_rendered_manifests_validate_strictly_against_the_kubernetes_api(version: str) -> None:
    validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is not installed")
    checked: list[str] = []
    custom: list[str] = []
    for kustomization in kustomizations():
        rendered = render(kustomization.parent)
        assert len(rendered) == sum(
            1 for path in listed_files(kustomization) for doc in yaml.safe_load_all(path.read_text()) if doc
        ), f"{kustomization} renders a different number of objects than its files hold"
        for document in rendered:
            where = f"{document['kind']}/{document['metadata']['name']}"
            assert document["metadata"].get("namespace") == "kutnahora", where
            if document["apiVersion"].split("/")[0] in CUSTOM_GROUPS:
                custom.append(where)
                continue
            try:
                validate.validate(document, version, strict=True)
            except validate.ValidationError as error:
                pytest.fail(
                    f"{where} is not valid Kubernetes {version}: {error.message} at {list(error.path)}"
                )
            checked.append(where)
    print(f"Kubernetes {version}: {len(checked)} objects valid, strict: {', '.join(checked)}")
    print(f"custom resources, no schema in the Kubernetes API: {', '.join(custom)}")
    assert len(checked) >= 7


def test_the_fallback_renderer_agrees_with_kustomize() -> None:
    if shutil.which("kubectl") is None:
        pytest.skip(
            "kubectl is not installed: the manifests were rendered by tests/deploy/kustomize.py alone"
        )
    for kustomization in kustomizations():
        by_kustomize = render_with_kubectl(kustomization.parent)
        assert by_kustomize is not None

        def key(document: dict[str, Any]) -> tuple[str, str]:
            return document["kind"], document["metadata"]["name"]

        assert sorted(by_kustomize, key=key) == sorted(render(kustomization.parent, kubectl=False), key=key)
