"""The operations guide documents what the server really has: every flag and variable, every metric."""

from __future__ import annotations

import re

from tests.deploy.promql import DEPLOY

GUIDE = (DEPLOY / "README.md").read_text()


def test_the_configuration_table_is_the_one_the_settings_declare() -> None:
    """The guide's table is generated from the declaration (``python -m kutnahora.server.config_reference
    --write deploy/README.md``): a setting added, renamed or given another default shows up here."""
    from kutnahora.server.config import ServerConfig
    from kutnahora.server.settings import markdown_table, replace_table

    table = markdown_table(ServerConfig)
    stale = "deploy/README.md's table is stale: python -m kutnahora.server.config_reference --write"
    assert table in GUIDE, stale
    assert replace_table(GUIDE, table) == GUIDE


def test_every_flag_and_variable_is_documented() -> None:
    from kutnahora.server.main import build_parser

    rows = {line for line in GUIDE.splitlines() if line.startswith("| `--")}
    for action in build_parser()._actions:
        if not action.option_strings or action.dest in ("help", "version"):
            continue
        flag = max(action.option_strings, key=len)
        variable = re.search(r"env (KUTNAHORA_\w+)", str(action.help))
        assert variable, f"{flag} names no variable in its help"
        assert any(f"`{flag}`" in row and f"`{variable[1]}`" in row for row in rows), (
            f"{flag} / {variable[1]}"
        )


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


def test_the_guide_gives_the_commands_to_start_the_stack_and_the_image() -> None:
    assert "docker compose -f deploy/compose.yaml up" in GUIDE
    assert "docker build -f deploy/Dockerfile" in GUIDE
