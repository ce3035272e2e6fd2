"""Rendering deploy/kubernetes/ as ``kubectl apply -k`` would, with kubectl or without it.

``kubectl kustomize`` does it where kubectl is installed. Elsewhere :func:`render` falls back on a small
renderer of the kustomization features the project's manifests use: ``resources`` (files and folders with a
kustomization of their own), ``namespace``, ``labels`` (added to each object's metadata, and to selectors
and pod templates when asked) and ``images``. It refuses any other field rather than render it wrong.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.promql import DEPLOY

KUBERNETES = DEPLOY / "kubernetes"
KNOWN_FIELDS = {"apiVersion", "kind", "namespace", "labels", "resources", "images"}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "StorageClass",
}
POD_TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


def kustomizations() -> list[Path]:
    """Every kustomization.yaml under deploy/kubernetes/."""
    return sorted(KUBERNETES.rglob("kustomization.yaml"))


def manifest_files() -> list[Path]:
    """Every manifest file under deploy/kubernetes/ (YAML files other than kustomizations)."""
    return sorted(
        path
        for pattern in ("*.yaml", "*.yml")
        for path in KUBERNETES.rglob(pattern)
        if path.name not in ("kustomization.yaml", "kustomization.yml")
    )


def load(kustomization: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(kustomization.read_text())
    return document


def listed_files(kustomization: Path) -> list[Path]:
    """The manifest files a kustomization takes in, following folders to their own kustomizations."""
    files: list[Path] = []
    for resource in load(kustomization).get("resources", []):
        path = (kustomization.parent / resource).resolve()
        if path.is_dir():
            files.extend(listed_files(path / "kustomization.yaml"))
        else:
            files.append(path)
    return files


def render_with_kubectl(folder: Path) -> list[dict[str, Any]] | None:
    """``kubectl kustomize FOLDER``'s objects, or None without kubectl."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    result = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, timeout=120, check=False
    )
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize {folder} failed: {result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def render(folder: Path, kubectl: bool = True) -> list[dict[str, Any]]:
    """The objects ``kubectl apply -k FOLDER`` would apply (kubectl's rendering where it is installed)."""
    if kubectl:
        rendered = render_with_kubectl(folder)
        if rendered is not None:
            return rendered
    kustomization = load(folder / "kustomization.yaml")
    unknown = set(kustomization) - KNOWN_FIELDS
    if unknown:
        raise NotImplementedError(
            f"{folder}: the fallback renderer knows no {sorted(unknown)}; install kubectl"
        )
    objects: list[dict[str, Any]] = []
    for resource in kustomization.get("resources", []):
        path = folder / resource
        if path.is_dir():
            objects.extend(render(path, kubectl=False))
        else:
            objects.extend(copy.deepcopy(doc) for doc in yaml.safe_load_all(path.read_text()) if doc)
    for document in objects:
        if "namespace" in kustomization and document["kind"] not in CLUSTER_SCOPED:
            document["metadata"]["namespace"] = kustomization["namespace"]
        for entry in kustomization.get("labels", []):
            add_labels(document, entry)
        for container in containers(document):
            set_image(container, kustomization.get("images", []))
    return objects


def add_labels(document: dict[str, Any], entry: dict[str, Any]) -> None:
    pairs: dict[str, str] = entry["pairs"]
    document["metadata"].setdefault("labels", {}).update(pairs)
    spec = document.get("spec", {})
    if entry.get("includeSelectors", False):
        if document["kind"] == "Service":
            spec.setdefault("selector", {}).update(pairs)
        elif "selector" in spec:
            spec["selector"].setdefault("matchLabels", {}).update(pairs)
    if (entry.get("includeSelectors", False) or entry.get("includeTemplates", False)) and "template" in spec:
        spec["template"].setdefault("metadata", {}).setdefault("labels", {}).update(pairs)


def containers(document: dict[str, Any]) -> list[dict[str, Any]]:
    if document["kind"] == "CronJob":
        pod = document["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    elif document["kind"] in POD_TEMPLATE_KINDS:
        pod = document["spec"]["template"]["spec"]
    elif document["kind"] == "Pod":
        pod = document["spec"]
    else:
        return []
    return [*pod.get("initContainers", []), *pod.get("containers", [])]


def set_image(container: dict[str, Any], images: list[dict[str, str]]) -> None:
    name = container["image"].split("@", 1)[0]
    tag = ""
    if ":" in name.rsplit("/", 1)[-1]:
        name, tag = name.rsplit(":", 1)
    for entry in images:
        if entry["name"] == name:
            name = entry.get("newName", name)
            if "digest" in entry:
                container["image"] = f"{name}@{entry['digest']}"
                return
            tag = str(entry.get("newTag", tag))
            container["image"] = f"{name}:{tag}" if tag else name
            return
