"""The operations guide documents what the server really has: every flag and variable, every metric."""

from __future__ import annotations

import re

from tests.deploy.promql import DEPLOY

GUIDE = (DEPLOY / "README.md").read_text()


def test_every_flag_and_variable_is_documented() -> None:
    from kutnahora.server.main import ENV_PREFIX, build_parser

    rows = {line for line in GUIDE.splitlines() if line.startswith("| `--")}
    for action in build_parser()._actions:
        if not action.option_strings or action.dest in ("help", "version"):
            continue
        flag = max(action.option_strings, key=len)
        variable = ENV_PREFIX + str(action.metavar)
        assert any(f"`{flag}`" in row and f"`{variable}`" in row for row in rows), f"{flag} / {variable}"


def test_every_metric_is_documented() -> None:
    from prometheus_client import CollectorRegistry

    from kutnahora.server.metrics import Metrics
    from kutnahora.server.replication import ReplicationMetrics

    metrics = Metrics()
    ReplicationMetrics(metrics.registry)
    documented = set(re.findall(r"^\| `(kutnahora_\w+)`", GUIDE, flags=re.MULTILINE))
    exported = set()
    for family in metrics.registry.collect():
        if family.name.startswith("kutnahora_"):
            exported.add(family.name + "_total" if family.type == "counter" else family.name)
    assert exported == documented
    assert isinstance(metrics.registry, CollectorRegistry)


def test_the_readme_section_points_to_the_guide() -> None:
    section = (DEPLOY / "README_SECTION.md").read_text()
    assert section.startswith("## Operations")
    assert "deploy/README.md" in section and "docker compose -f deploy/compose.yaml up" in section
