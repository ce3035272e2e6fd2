"""Refusals counted and logged, tried as an attacker would: a visitor flooding a limit is counted once per
refused request but logged once a window, many visitors together write a bounded number of lines, and
what a visitor sends cannot add series to the metrics; ``/metrics`` is never served on the visitors' port.

The application runs in this process in front of the session's game server (as in
``test_visitor_limits.py``); the refusal log is also tried alone, with a clock of its own.
"""

from __future__ import annotations

import httpx
import pytest
from structlog.testing import capture_logs

from kutnahora.web.app import create_app
from kutnahora.web.limits import Limits
from kutnahora.web.metrics import WebMetrics
from kutnahora.web.refusals import RefusalLog
from tests.web.conftest import Servers, runs_on_own_loop
from tests.web.test_visitor_limits import OPEN_GAME, ORIGIN, refused, serve


def refusal_lines(logs: list[dict[str, object]]) -> list[dict[str, object]]:
    return [line for line in logs if line["event"] == "visitor refused"]


@runs_on_own_loop
async def test_a_flood_of_creations_is_counted_in_full_and_logged_once(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0.001, creation_burst=2, games=0, requests=0, streams=0)
    with capture_logs() as logs:
        async with (
            serve(servers, limits, monkeypatch) as site,
            site.visitor("198.51.100.80") as attacker,
            site.visitor("198.51.100.81") as other,
        ):
            answers = [await attacker.post("/api/games", json=OPEN_GAME) for _ in range(25)]
            assert [a.status_code for a in answers[:2]] == [200, 200]
            for answer in answers[2:]:
                refused(answer, "Too many games created or joined from your address")
            assert len(site.created) == 2
            # Every refusal is counted, by its limit and as a request answered 429 on its route...
            assert site.sample("kutnahora_web_refusals_total", limit="creations") == 23
            assert site.sample("kutnahora_web_refusals_total", limit="requests") == 0
            labels = {"route": "/api/games", "method": "POST"}
            assert site.sample("kutnahora_web_requests_total", status="429", **labels) == 23
            assert site.sample("kutnahora_web_requests_total", status="200", **labels) == 2
            assert site.sample("kutnahora_web_visitors_remembered", table="creations") == 1
            # ... but the flood writes one line, naming the visitor and the limit.
            assert refusal_lines(logs) == [
                {
                    "event": "visitor refused",
                    "log_level": "info",
                    "visitor": "ipv4:198.51.100.80",
                    "limit": "creations",
                    "retry_after": pytest.approx(60_000, rel=0.01),
                }
            ]
            # Another visitor refused is a line of its own.
            for _ in range(3):
                await other.post("/api/games", json=OPEN_GAME)
            assert site.sample("kutnahora_web_refusals_total", limit="creations") == 24
            assert [line["visitor"] for line in refusal_lines(logs)] == [
                "ipv4:198.51.100.80",
                "ipv4:198.51.100.81",
            ]


def test_the_refusal_log_writes_once_per_visitor_and_limit_a_window_and_a_bounded_number_in_all() -> None:
    now = [0.0]
    metrics = WebMetrics()
    log = RefusalLog(metrics, clock=lambda: now[0], window=60, lines=50)
    with capture_logs() as logs:
        for _ in range(200):
            log.refused("ipv4:203.0.113.1", "requests", 0.5)
        log.refused("ipv4:203.0.113.1", "streams", 10)  # another limit: a line of its own
        assert len(refusal_lines(logs)) == 2
        # Five hundred addresses flooding at once write no more than the budget of lines.
        for host in range(500):
            for _ in range(3):
                log.refused(f"ipv6:2001:db8:{host:x}::/64", "creations", 9)
        assert len(refusal_lines(logs)) == 50
        # In the next window, the next line of a visitor says how many of its refusals went unlogged,
        # and how many lines the budget left out.
        now[0] = 61
        log.refused("ipv4:203.0.113.1", "requests", 0.5)
        last = refusal_lines(logs)[-1]
        assert (last["visitor"], last["limit"], last["left_out"]) == ("ipv4:203.0.113.1", "requests", 199)
        assert last["lines_left_out"] == 500 - 48
        # However many addresses there are, a window has its budget of lines and no more.
        for host in range(5000):
            for _ in range(2):
                log.refused(f"ipv4:10.{host // 250}.{host % 250}.1", "requests", 1)
        assert len(refusal_lines(logs)) == 100
    sample = metrics.registry.get_sample_value
    assert sample("kutnahora_web_refusals_total", {"limit": "requests"}) == 201 + 10_000
    assert sample("kutnahora_web_refusals_total", {"limit": "streams"}) == 1
    assert sample("kutnahora_web_refusals_total", {"limit": "creations"}) == 1500


@runs_on_own_loop
async def test_what_a_visitor_sends_adds_no_series_to_the_metrics(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serve(servers, Limits.off(), monkeypatch) as site, site.visitor("198.51.100.90") as visitor:
        for number in range(30):
            await visitor.get(f"/games/{number:016x}")
            await visitor.get(f"/no/such/{number}/page")
            await visitor.request(f"VERB{number}", "/api/games")
        series = [
            sample.labels
            for metric in site.app.state.metrics.registry.collect()
            if metric.name == "kutnahora_web_requests"
            for sample in metric.samples
            if sample.name == "kutnahora_web_requests_total"
        ]
    routes = {labels["route"] for labels in series}
    assert routes == {"/games/{game_id}", "unmatched", "/api/games"}
    assert {labels["method"] for labels in series} == {"GET", "other"}
    assert len(series) <= 6


@runs_on_own_loop
async def test_the_visitors_port_never_serves_metrics() -> None:
    app = create_app("127.0.0.1:1", limits=Limits.off())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("198.51.100.99", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as visitor:
            for path in ("/metrics", "/metrics/", "/api/metrics"):
                answer = await visitor.get(path)
                assert answer.status_code == 404, path
                assert "kutnahora_web" not in answer.text
