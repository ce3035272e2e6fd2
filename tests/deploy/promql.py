"""Reading the metric and label names out of PromQL expressions (the dashboard's and the alert rules').

Good enough for the expressions this project writes: selectors, ranges, aggregations with ``by``,
binary operators, Grafana's ``$variables``. It is not a PromQL parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

KEYWORDS = {
    "and",
    "or",
    "unless",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "offset",
    "bool",
}
GRAFANA_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\w+")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)?\s*\{([^}]*)\}")
MATCHER_LABEL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)")
GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
RANGE = re.compile(r"\[[^\]]*\]")
IDENTIFIER = re.compile(r"(?<![\w.])([A-Za-z_:][A-Za-z0-9_:]*)\b(\s*\()?")


def _clean(expr: str) -> str:
    return GRAFANA_VARIABLE.sub("1", expr)


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects."""
    text = _clean(expr)
    text = SELECTOR.sub(lambda m: f" {m.group(1) or ''} ", STRING.sub('""', text))
    text = RANGE.sub(" ", GROUPING.sub(" ", text))
    names = set()
    for match in IDENTIFIER.finditer(text):
        name, call = match.group(1), match.group(2)
        if call or name in KEYWORDS or name.lower() in ("inf", "nan"):
            continue
        names.add(name)
    return names


def selector_labels(expr: str) -> list[tuple[str, set[str]]]:
    """(metric, label names matched in its selector) for every selector with a metric name."""
    text = STRING.sub('""', _clean(expr))
    return [
        (match.group(1), set(MATCHER_LABEL.findall(match.group(2))))
        for match in SELECTOR.finditer(text)
        if match.group(1)
    ]


def grouping_labels(expr: str) -> set[str]:
    """The label names of every ``by``/``without``/``on``/``ignoring`` clause."""
    labels: set[str] = set()
    for match in GROUPING.finditer(_clean(expr)):
        labels.update(part.strip() for part in match.group(2).split(",") if part.strip())
    return labels


def dashboard_expressions() -> Iterator[tuple[str, str]]:
    """(where, expression) for every query of every dashboard, its variables' queries included."""
    for path in sorted((DEPLOY / "grafana" / "dashboards").glob("*.json")):
        dashboard = json.loads(path.read_text())
        for panel in _panels(dashboard.get("panels", [])):
            for target in panel.get("targets", []):
                if target.get("expr"):
                    yield f"{path.name}: panel {panel.get('title')!r}", target["expr"]
        for variable in dashboard.get("templating", {}).get("list", []):
            query = variable.get("query")
            text = query.get("query") if isinstance(query, dict) else query
            if variable.get("type") == "query" and text:
                inner = re.match(r"label_values\((.*),\s*\w+\)$", text)
                yield f"{path.name}: variable {variable['name']}", inner.group(1) if inner else text


def _panels(panels: list[dict[str, object]]) -> Iterator[dict[str, object]]:
    for panel in panels:
        yield panel
        nested = panel.get("panels")
        if isinstance(nested, list):
            yield from _panels(nested)


def rule_expressions() -> Iterator[tuple[str, str]]:
    """(alert name, expression) for every rule of deploy/prometheus/alerts.yml."""
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            yield rule.get("alert") or rule.get("record"), rule["expr"]
