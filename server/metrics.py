"""Prometheus metrics of one server, in their own registry, served on their own HTTP port.

Names follow Prometheus conventions: the ``kutnahora_`` prefix, ``_total`` for counters, ``_seconds`` for
durations, base units. The registry also carries the standard process and platform collectors. Each
server has its own registry, so several servers can run in one process (as the tests do).
"""

from __future__ import annotations

import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)

from kutnahora.plumbing.signals import Signals

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5)
STORE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5)
BUILD_BUCKETS = (0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01)
GAME_STATUSES = ("waiting", "active", "finished", "abandoned")
LIMITS = (
    "rate",
    "max_games",
    "max_watchers",
    "max_players",
    "caller_games",
    "caller_rate",
    "caller_reads",
    "caller_streams",
    "overloaded",
    "probe_rate",
    "probe_streams",
    "seat_rate",
    "seat_streams",
)
REJECT_REASONS = (
    "stale_version",
    "not_your_turn",
    "not_an_option",
    "game_not_active",
    "malformed",
    "rate_limited",
    "unauthenticated",
    "permission_denied",
    "not_found",
)


class Metrics:
    """Every metric the server records."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        r = self.registry
        self.games_created = Counter("kutnahora_games_created_total", "Games created.", registry=r)
        self.games_ended = Counter(
            "kutnahora_games_ended_total", "Games that ended, by how they ended.", ["status"], registry=r
        )
        self.games_abandoned = Counter(
            "kutnahora_games_abandoned_total",
            "Games abandoned, by why: request (AbandonGame), idle (--idle-timeout) or engine_error.",
            ["reason"],
            registry=r,
        )
        self.games = Gauge("kutnahora_games", "Games held in memory, by status.", ["status"], registry=r)
        self.build_info = Gauge(
            "kutnahora_build_info",
            "Always 1: the server's version, the rules version, the content hash of its component set, and "
            "whether its engine and encoder run compiled (a wheel built with KUTNAHORA_COMPILE=1).",
            ["version", "rules_version", "components", "compiled"],
            registry=r,
        )
        self.decisions = Counter(
            "kutnahora_decisions_applied_total",
            "Decisions applied, by who made them.",
            ["source"],
            registry=r,
        )
        self.submission_latency = Histogram(
            "kutnahora_submission_latency_seconds",
            "Time from receiving a submission to answering it, by path (unary or stream).",
            ["path"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.rejected = Counter(
            "kutnahora_submissions_rejected_total", "Submissions refused, by reason.", ["reason"], registry=r
        )
        self.timeouts = Counter(
            "kutnahora_clock_timeouts_total", "Default decisions applied because a clock ran out.", registry=r
        )
        self.replaced = Counter(
            "kutnahora_seats_replaced_total",
            "Seats handed to the random policy, by why (resigned or strikes).",
            ["reason"],
            registry=r,
        )
        self.watch_streams = Gauge("kutnahora_watch_streams", "Open WatchGame streams.", registry=r)
        self.play_streams = Gauge("kutnahora_play_streams", "Open Play streams.", registry=r)
        self.streams_taken_over = Counter(
            "kutnahora_play_streams_taken_over_total",
            "Play streams ended because a newer stream of the same seat took the seat over.",
            registry=r,
        )
        self.store_write = Histogram(
            "kutnahora_store_write_seconds",
            "Time from asking the store to append a decision until it is durable.",
            buckets=STORE_BUCKETS,
            registry=r,
        )
        self.store_commits = Counter(
            "kutnahora_store_commits_total",
            "Store transactions committed (each may hold several writes).",
            registry=r,
        )
        self.store_commit_writes = Counter(
            "kutnahora_store_commit_writes_total", "Writes committed, summed over transactions.", registry=r
        )
        self.store_commit = Histogram(
            "kutnahora_store_commit_seconds",
            "Time to run and commit one store transaction, from its first statement to its commit.",
            buckets=STORE_BUCKETS,
            registry=r,
        )
        self.observation_build = Histogram(
            "kutnahora_observation_build_seconds",
            "Time to build one observation for one viewer (engine view and wire encoding).",
            buckets=BUILD_BUCKETS,
            registry=r,
        )
        self.rpcs = Counter(
            "kutnahora_rpc_requests_total",
            "RPCs handled, by method and status code.",
            ["rpc", "code"],
            registry=r,
        )
        self.refused = Counter(
            "kutnahora_limit_refusals_total", "Requests refused by a limit, by limit.", ["limit"], registry=r
        )
        for limit in LIMITS:
            self.refused.labels(limit=limit)
        self.quota_store_errors = Counter(
            "kutnahora_quota_store_errors_total",
            "Times the shared quota store (--quota-store) failed or did not answer in time, so that the "
            "per-caller quotas and the per-seat limits counted in this replica's memory.",
            registry=r,
        )
        # The event loop's lag and the collector's pauses, sampled once the server starts.
        self.signals = Signals(r)
        for status in GAME_STATUSES:
            self.games.labels(status=status).set(0)
        # The labelled series updated on every decision, looked up once: a lookup costs more than an update.
        self.decisions_by_source = {s: self.decisions.labels(source=s) for s in ("seat", "timeout", "policy")}
        for reason in REJECT_REASONS:
            self.rejected.labels(reason=reason)
        self.latency_by_path = {p: self.submission_latency.labels(path=p) for p in ("unary", "stream")}

    def on_commit(self, seconds: float, writes: int) -> None:
        """Count one store commit of ``writes`` writes that took ``seconds`` (called from the thread that
        committed it)."""
        self.store_commits.inc()
        self.store_commit_writes.inc(writes)
        self.store_commit.observe(seconds)


class MetricsEndpoint:
    """The HTTP server that serves ``/metrics`` in a background thread."""

    def __init__(self, metrics: Metrics, host: str, port: int) -> None:
        server, thread = start_http_server(port, addr=host, registry=metrics.registry)
        self._server: WSGIServer = server
        self._thread: threading.Thread = thread
        self.port: int = server.server_port

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
