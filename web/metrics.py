"""The web server's Prometheus metrics, in a registry of their own, served on a port of their own.

``/metrics`` is never served on the port the visitors reach: ``kutnahora-web --metrics-port PORT`` serves
it on another one, on ``--metrics-host`` (127.0.0.1 by default), and without it nothing serves it (the
default; see docs/web.md#metrics). Names follow the game server's and the arena's: the
``kutnahora_web_`` prefix, ``_total`` for counters. Every label takes one of a fixed few values, whatever
a visitor sends: the limits' names, the routes' templates (``unmatched`` for any other path), the usual
methods (``other`` for any other) and the status codes this server answers with.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LIMITS = ("creations", "games", "requests", "streams", "connections", "heads")
"""The per-visitor limits (:class:`kutnahora.web.limits.Limits`), as the ``limit`` label names them, and
``heads``: connections closed because a request's head was late (:mod:`kutnahora.web.connections`)."""
METHODS = frozenset({"GET", "HEAD", "POST"})
"""The methods the ``method`` label names; any other is ``other``."""
UNMATCHED = "unmatched"
"""The ``route`` label of a path that no route matches."""


class Tables(Protocol):
    """What :class:`TablesCollector` reads at each scrape: sizes only, each a single read, so that the
    metrics thread never walks a table the event loop is changing."""

    def remembered(self) -> dict[str, int]:
        """The visitors each table holds, by table."""

    def open_streams(self) -> int:
        """The event streams open now, every visitor's."""


class TablesCollector(Collector):
    """The per-visitor tables' sizes, read when Prometheus scrapes."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    def collect(self) -> Iterable[Metric]:
        remembered = GaugeMetricFamily(
            "kutnahora_web_visitors_remembered",
            "Visitors a per-visitor table holds (the buckets at most 10,000 each; games and streams only "
            "visitors that hold some), by table.",
            labels=["table"],
        )
        for table, count in self.tables.remembered().items():
            remembered.add_metric([table], count)
        yield remembered
        yield GaugeMetricFamily(
            "kutnahora_web_event_streams",
            "Event streams (live games followed) open on this web server.",
            value=self.tables.open_streams(),
        )


class WebMetrics:
    """Refusals by limit, requests by route, method and status, the per-visitor tables' sizes, and the
    failures of a shared quota store."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        self.refusals = Counter(
            "kutnahora_web_refusals_total",
            "Requests refused by a per-visitor limit (HTTP 429), by limit.",
            ["limit"],
            registry=self.registry,
        )
        self.refused = {limit: self.refusals.labels(limit=limit) for limit in LIMITS}
        self.requests = Counter(
            "kutnahora_web_requests_total",
            "Requests answered, by route, method and HTTP status (the static files are one route).",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.quota_store_errors = Counter(
            "kutnahora_web_quota_store_errors_total",
            "Times the shared quota store (--quota-store) failed or did not answer in time, so that the "
            "per-visitor limits counted in this replica's memory.",
            registry=self.registry,
        )
        self._tables: TablesCollector | None = None

    def watch(self, tables: Tables) -> None:
        """Export the sizes of ``tables`` (once per registry: a second call replaces the first)."""
        if self._tables is not None:
            self.registry.unregister(self._tables)
        self._tables = TablesCollector(tables)
        self.registry.register(self._tables)

    def answered(self, route: str, method: str, status: int) -> None:
        self.requests.labels(route=route, method=method, status=str(status)).inc()


class RequestMetrics:
    """Count each HTTP request by its route's template, method and status, when the answer starts (so an
    event stream counts when it opens); a request that fails before answering counts as 500. A plain ASGI
    middleware, so that event streams pass through unbuffered."""

    def __init__(self, app: ASGIApp, metrics: WebMetrics, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    def route(self, scope: Scope) -> str:
        """The template of the route whose path the request's matches (whatever its method), or
        :data:`UNMATCHED`."""
        for route in self.routes:
            if route.matches(scope)[0] is not Match.NONE:
                return str(getattr(route, "path", UNMATCHED))
        return UNMATCHED

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = self.route(scope)
        method = scope["method"] if scope["method"] in METHODS else "other"
        started = False

        async def counting_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start" and not started:
                started = True
                self.metrics.answered(route, method, int(message["status"]))
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        except BaseException:
            if not started:
                self.metrics.answered(route, method, 500)
            raise


class MetricsEndpoint:
    """``/metrics`` served from ``registry`` on ``host``:``port`` (0 picks a free port), in a thread of its
    own; ``OSError`` when the port cannot be had."""

    def __init__(self, registry: CollectorRegistry, host: str, port: int) -> None:
        self._server, self._thread = start_http_server(port, addr=host, registry=registry)
        self.host = host
        self.port = int(self._server.server_port)

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/metrics"

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
