"""Prometheus and Grafana: the rules pass promtool and their unit tests, every metric that the dashboard
and the rules name is one the server really exports, and a real Prometheus scraping a real server during
a bot game sees the decisions and the latency histogram.

promtool and prometheus come from Debian's ``prometheus`` package (``.ci/run`` installs it); the tests
that need them skip, saying so, when they are absent.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import urlopen

import pytest
import yaml

import kutnahora
from tests.deploy.promql import (
    DEPLOY,
    dashboard_expressions,
    grouping_labels,
    metric_names,
    rule_expressions,
    selector_labels,
)
from tests.deploy.servers import ServerProcess, start_server

PROMETHEUS_DIR = DEPLOY / "prometheus"
# Labels that Prometheus adds to every scraped series, and the bucket label of histograms.
TARGET_LABELS = {"job", "instance"}
SYNTHETIC_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}


def promtool() -> str:
    """The promtool binary, or a skip saying how to get it."""
    path = shutil.which("promtool")
    if path is None:
        pytest.skip("promtool is not installed (Debian: apt-get install -y prometheus)")
    return path


def run_promtool(*args: str, cwd: Path = PROMETHEUS_DIR) -> str:
    result = subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"promtool {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


# --- static checks -----------------------------------------------------------------------------------


def test_promtool_accepts_the_scrape_configuration() -> None:
    assert "SUCCESS" in run_promtool("check", "config", "prometheus.yml")


def test_promtool_accepts_the_alert_rules() -> None:
    assert "SUCCESS" in run_promtool("check", "rules", "alerts.yml")


def test_every_alert_passes_its_promtool_unit_tests() -> None:
    assert "SUCCESS" in run_promtool("test", "rules", "alerts_test.yml", cwd=PROMETHEUS_DIR / "tests")


def alert_names() -> list[str]:
    return [name for name, _ in rule_expressions()]


def test_every_alert_has_a_unit_test_where_it_fires_and_one_where_it_does_not() -> None:
    tests = yaml.safe_load((PROMETHEUS_DIR / "tests" / "alerts_test.yml").read_text())
    fires: set[str] = set()
    quiet: set[str] = set()
    for case in tests["tests"]:
        for check in case.get("alert_rule_test", []):
            (fires if check.get("exp_alerts") else quiet).add(check["alertname"])
    assert set(alert_names()) - fires == set(), "alerts without a test in which they fire"
    assert set(alert_names()) - quiet == set(), "alerts without a test in which they stay quiet"


def test_every_alert_has_a_severity_a_summary_and_a_runbook_section() -> None:
    readme = (DEPLOY / "README.md").read_text()
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in readme.splitlines()
        if line.startswith("#")
    }
    rules = yaml.safe_load((PROMETHEUS_DIR / "alerts.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
            assert rule["annotations"]["summary"] and rule["annotations"]["description"], rule["alert"]
            runbook = rule["annotations"]["runbook"]
            assert runbook == f"deploy/README.md#{rule['alert'].lower()}", rule["alert"]
            assert rule["alert"].lower() in anchors, f"deploy/README.md has no section {rule['alert']}"


def test_the_kubernetes_prometheus_rule_carries_the_same_rules() -> None:
    rules = yaml.safe_load((PROMETHEUS_DIR / "alerts.yml").read_text())
    operator = yaml.safe_load((DEPLOY / "kubernetes" / "prometheusrule.yaml").read_text())
    assert operator["kind"] == "PrometheusRule"
    assert operator["spec"]["groups"] == rules["groups"]


def test_the_dashboard_is_provisioned_with_its_data_source() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "kutnahora.json").read_text())
    provider = yaml.safe_load(
        (DEPLOY / "grafana" / "provisioning" / "dashboards" / "kutnahora.yml").read_text()
    )
    sources = yaml.safe_load(
        (DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text()
    )
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    grafana_volumes = compose["services"]["grafana"]["volumes"]
    dashboards_path = provider["providers"][0]["options"]["path"]
    assert f"./grafana/dashboards:{dashboards_path}:ro" in grafana_volumes
    assert "./grafana/provisioning:/etc/grafana/provisioning:ro" in grafana_volumes
    (source,) = sources["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["query"] == "prometheus"
    assert dashboard["uid"] and dashboard["title"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], panel["title"]
    titles = " ".join(panel["title"].lower() for panel in dashboard["panels"])
    for topic in ("games", "decisions per second", "latency", "rejected", "timeouts", "streams", "store"):
        assert topic in titles, f"the dashboard has no panel on {topic}"


def test_the_promql_reader_finds_metric_and_label_names() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le, path) (rate(a_seconds_bucket{job="k", instance=~"$instance"}'
        "[$__rate_interval]))) > 0.2 and on (job) sum(rate(b_total[5m] offset 1h)) / ignoring(x) c == 1e3"
    )
    assert metric_names(expr) == {"a_seconds_bucket", "b_total", "c"}
    assert grouping_labels(expr) == {"le", "path", "job", "x"}
    assert selector_labels(expr) == [("a_seconds_bucket", {"job", "instance"})]


# --- a real server ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server with an in-memory store and its metrics endpoint."""
    process = start_server(":memory:", tmp_path_factory.mktemp("server-log"), "metrics-server")
    try:
        yield process
    finally:
        process.stop()


def play_bot_game(address: str, seed: int) -> int:
    """Two random bots play one game over the Play stream; returns the number of decisions."""
    from kutnahora.clients.bots.random_bot import RandomBot
    from kutnahora.clients.sdk import Client
    from kutnahora.v1 import game_pb2

    async def play() -> int:
        async with await Client.connect(address) as client:
            created = await client.create_game(2, seed=seed, clock=game_pb2.ClockSettings(disabled=True))
            seats = [await client.join_game(created.game.game_id) for _ in range(2)]
            await asyncio.gather(*(client.play(RandomBot(seed + i), seat) for i, seat in enumerate(seats)))
            return int((await client.get_game(created.game.game_id)).version)

    return asyncio.run(play())


def exported_metrics(server: ServerProcess) -> tuple[dict[str, str], str]:
    """The metric families the server's /metrics declares (name -> type), and the raw text."""
    with urlopen(server.metrics_url, timeout=5) as response:
        text = response.read().decode()
    families = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, flags=re.MULTILINE))
    return families, text


def sample_names(families: dict[str, str]) -> set[str]:
    """Every series name the declared families produce."""
    names = set(SYNTHETIC_SERIES)
    for name, kind in families.items():
        names.add(name)
        if kind == "histogram":
            names.update({f"{name}_bucket", f"{name}_sum", f"{name}_count"})
        if kind == "summary":
            names.update({f"{name}_sum", f"{name}_count"})
    return names


def arena_series() -> set[str]:
    """Every series name the arena's metrics produce (the rules read them under job kutnahora-arena)."""
    from kutnahora.arena.metrics import ArenaMetrics

    families = {family.name: family.type for family in ArenaMetrics().registry.collect()}
    return {
        name + suffix
        for name, kind in families.items()
        for suffix in {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}.get(kind, ("",))
    }


def server_label_names() -> dict[str, set[str]]:
    """Each kutnahora_ metric's label names, read from the server's and the arena's metric definitions."""
    from prometheus_client import Metric
    from prometheus_client.metrics import MetricWrapperBase

    from kutnahora.arena.metrics import ArenaMetrics
    from kutnahora.server.metrics import Metrics

    labels: dict[str, set[str]] = {}
    metrics = Metrics()
    signals = [*vars(metrics.signals.lag).values(), *vars(metrics.signals.gc).values()]
    for value in [*vars(metrics).values(), *vars(ArenaMetrics()).values(), *signals]:
        if isinstance(value, MetricWrapperBase):
            described: list[Metric] = list(value.describe())
            for family in described:
                kind = family.type
                names = set(value._labelnames)
                for suffix in ("", "_total", "_bucket", "_sum", "_count", "_created"):
                    labels[family.name + suffix] = names | ({"le"} if kind == "histogram" else set())
    return labels


def used_expressions() -> list[tuple[str, str]]:
    return [*rule_expressions(), *dashboard_expressions()]


def test_every_metric_in_the_dashboard_and_the_rules_is_exported(server: ServerProcess) -> None:
    play_bot_game(server.address, seed=11)
    families, text = exported_metrics(server)
    assert "kutnahora_decisions_applied_total" in text
    exported = sample_names(families)
    arena = arena_series()
    missing = {
        (where, name)
        for where, expr in used_expressions()
        for name in metric_names(expr)
        if name not in (arena if name.startswith("kutnahora_arena_") else exported)
    }
    assert missing == set(), "metrics used but not exported by the server"
    # Names follow the conventions the README promises.
    for name, kind in families.items():
        if name.startswith("kutnahora_"):
            assert kind != "counter" or name.endswith("_total"), name
            assert not name.endswith("_milliseconds"), name


def test_every_label_in_the_dashboard_and_the_rules_exists_on_its_metric() -> None:
    known = server_label_names()
    for where, expr in used_expressions():
        used = [
            (metric, labels) for metric, labels in selector_labels(expr) if metric.startswith("kutnahora_")
        ]
        for metric, labels in used:
            assert labels - TARGET_LABELS <= known[metric], (
                where,
                metric,
                labels - TARGET_LABELS - known[metric],
            )
        metrics = [m for m in metric_names(expr) if m.startswith("kutnahora_")]
        if metrics:
            available = set().union(*(known[m] for m in metrics)) | TARGET_LABELS
            assert grouping_labels(expr) <= available, (where, grouping_labels(expr) - available)


# --- a real Prometheus ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def query(base: str, expr: str) -> list[dict[str, Any]]:
    with urlopen(f"{base}/api/v1/query?{urlencode({'query': expr})}", timeout=5) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def scalar(base: str, expr: str) -> float | None:
    result = query(base, expr)
    return float(result[0]["value"][1]) if result else None


def wait_for(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)


@pytest.fixture
def prometheus(server: ServerProcess, tmp_path: Path) -> Iterator[str]:
    """A real Prometheus scraping the server every second, with the project's alert rules loaded."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (Debian: apt-get install -y prometheus)")
    target = server.metrics_url.removeprefix("http://").removesuffix("/metrics")
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(PROMETHEUS_DIR / "alerts.yml")],
        "scrape_configs": [{"job_name": "kutnahora", "static_configs": [{"targets": [target]}]}],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = open(tmp_path / "prometheus.log", "w")  # noqa: SIM115 - closed below, after the process
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--web.enable-lifecycle",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            if process.poll() is not None:
                raise AssertionError((tmp_path / "prometheus.log").read_text()[-3000:])
            try:
                with urlopen(f"{base}/-/ready", timeout=2) as response:
                    return bool(response.status == 200)
            except OSError:
                return False

        wait_for(ready, 30, "Prometheus to be ready")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_prometheus_sees_decisions_and_latency_during_a_bot_game(
    server: ServerProcess, prometheus: str
) -> None:
    # A first scrape before the game, so the rise is measured from there.
    wait_for(lambda: scalar(prometheus, 'up{job="kutnahora"}') == 1, 20, "the first scrape")
    before = scalar(prometheus, 'sum(kutnahora_decisions_applied_total{job="kutnahora"})') or 0.0
    decisions = play_bot_game(server.address, seed=23)
    assert decisions > 50

    def risen() -> float | None:
        now = scalar(prometheus, 'sum(kutnahora_decisions_applied_total{job="kutnahora"})')
        return now if now is not None and now >= before + decisions else None

    after = wait_for(risen, 20, "the decision counter to rise")
    assert after - before >= decisions
    assert (
        scalar(prometheus, 'sum(increase(kutnahora_decisions_applied_total{job="kutnahora"}[1m]))') or 0
    ) > 0
    count = scalar(
        prometheus, 'sum(kutnahora_submission_latency_seconds_count{job="kutnahora", path="stream"})'
    )
    assert count is not None and count >= decisions / 2  # every seat decision was timed
    buckets = 'kutnahora_submission_latency_seconds_bucket{job="kutnahora"}'
    p99 = scalar(prometheus, f"histogram_quantile(0.99, sum by (le) ({buckets}))")
    assert p99 is not None and math.isfinite(p99) and 0 < p99 < 2.5
    # The project's rules loaded and evaluate without errors against the real series.
    with urlopen(f"{prometheus}/api/v1/rules", timeout=5) as response:
        groups = json.load(response)["data"]["groups"]
    loaded = {rule["name"]: rule for group in groups for rule in group["rules"]}
    assert set(loaded) == set(alert_names())

    def evaluated() -> bool:
        with urlopen(f"{prometheus}/api/v1/rules", timeout=5) as response:
            rules = [r for g in json.load(response)["data"]["groups"] for r in g["rules"]]
        return all(rule.get("health") == "ok" for rule in rules)

    wait_for(evaluated, 10, "every rule to evaluate healthily")
    firing = {a["labels"]["alertname"] for a in query(prometheus, 'ALERTS{alertstate="firing"}')}
    assert firing == set(), f"alerts firing against a healthy server: {firing}"
    # Every dashboard query is PromQL that Prometheus evaluates, Grafana's variables filled in as it would.
    results: dict[str, list[list[dict[str, Any]]]] = {}
    for where, expr in dashboard_expressions():
        filled = expr.replace("$__rate_interval", "1m").replace("$instance", ".*")
        try:
            results.setdefault(where, []).append(query(prometheus, filled))
        except HTTPError as error:
            raise AssertionError(f"{where}: Prometheus refused {filled!r}: {error.read().decode()}") from None
    # The efficiency panels give a decision's cost in seconds: a server's CPU, the parts of its work.
    for panel, queries in (("CPU per decision", 1), ("Time per decision by part", 3)):
        answers = next(found for name, found in results.items() if name.endswith(f"panel {panel!r}"))
        assert len(answers) == queries
        for series in answers:
            values = [float(sample["value"][1]) for sample in series]
            assert values and all(0 < value < 1 for value in values), (panel, values)
    # The build table names each replica's version and whether it runs compiled.
    (builds,) = next(
        found for name, found in results.items() if name.endswith("panel 'Build of each replica'")
    )
    assert [sample["metric"]["version"] for sample in builds] == [kutnahora.__version__]
    assert builds[0]["metric"]["compiled"] in ("true", "false")
