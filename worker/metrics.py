"""The worker's Prometheus metrics: seats played and builds made, by outcome, versions made ready (built or
adopted), and the leases it holds."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


class WorkerMetrics:
    """The worker's counters and gauges, in a registry of their own (served by ``--metrics-port``)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.seats = Counter(
            "kutnahora_worker_seats",
            "Hosted seats played, by how they ended (finished, failed; stopped: the worker stopped or its "
            "lease was lost while the seat played; lost: its game server was lost).",
            ["outcome"],
            registry=self.registry,
        )
        self.builds = Counter(
            "kutnahora_worker_builds",
            "Build jobs reported, by outcome (ok, failed); a version built before on this worker is reported "
            "with its first build's outcome without being built again.",
            ["outcome"],
            registry=self.registry,
        )
        self.versions = Counter(
            "kutnahora_worker_versions_ready",
            "Versions made ready on this worker, by how (built: built here; adopted: another worker's built "
            "folder fetched and played without building).",
            ["how"],
            registry=self.registry,
        )
        self.leases = Gauge(
            "kutnahora_worker_leases",
            "Leases the worker holds now, by kind (build, host).",
            ["kind"],
            registry=self.registry,
        )
        self.arena_errors = Counter(
            "kutnahora_worker_arena_errors",
            "Calls to the arena that failed because it could not be reached (each is retried).",
            registry=self.registry,
        )
        for outcome in ("finished", "failed", "stopped", "lost"):
            self.seats.labels(outcome)
        for outcome in ("ok", "failed"):
            self.builds.labels(outcome)
        for how in ("built", "adopted"):
            self.versions.labels(how)
        for kind in ("build", "host"):
            self.leases.labels(kind)
