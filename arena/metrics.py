"""The arena's Prometheus metrics, in a registry of their own (served at ``/metrics``)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

WAIT_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)


class ArenaMetrics:
    """Tickets waiting, time to a match, matches, rating updates and placement failures; hosted bots'
    submissions, builds, leases and seats."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.tickets_waiting = Gauge(
            "kutnahora_arena_tickets_waiting",
            "Tickets waiting for a match.",
            ["pool"],
            registry=self.registry,
        )
        self.time_to_match = Histogram(
            "kutnahora_arena_time_to_match_seconds",
            "Seconds from a Seek to its Matched message.",
            ["pool"],
            buckets=WAIT_BUCKETS,
            registry=self.registry,
        )
        self.matches = Counter(
            "kutnahora_arena_matches_total",
            "Games placed for matched tickets.",
            ["pool"],
            registry=self.registry,
        )
        self.rating_updates = Counter(
            "kutnahora_arena_rating_updates_total", "Finished games rated.", ["pool"], registry=self.registry
        )
        self.unrated_games = Counter(
            "kutnahora_arena_unrated_games_total",
            "Games that ended without a rating (abandoned, or their game server lost).",
            ["pool"],
            registry=self.registry,
        )
        self.placement_failures = Counter(
            "kutnahora_arena_placement_failures_total",
            "Games a game server refused or could not create; their tickets wait again.",
            ["server"],
            registry=self.registry,
        )
        self.refusals = Counter(
            "kutnahora_arena_refusals_total",
            "Refused arena requests, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.quota_store_errors = Counter(
            "kutnahora_arena_quota_store_errors_total",
            "Times the shared quota store (--quota-store) failed or did not answer in time, so that the "
            "per-caller limits counted in this replica's memory.",
            registry=self.registry,
        )
        self.event_streams = Gauge(
            "kutnahora_arena_event_streams",
            "StreamEvents streams open on this replica.",
            registry=self.registry,
        )
        self.leader = Gauge(
            "kutnahora_arena_matchmaker_leader",
            "1 while this replica runs the matchmaker (always 1 with SQLite).",
            registry=self.registry,
        )
        self.matchmaker_seconds = Histogram(
            "kutnahora_arena_matchmaker_seconds",
            "Seconds one matchmaker pass takes.",
            buckets=(0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1),
            registry=self.registry,
        )
        self.submissions = Counter(
            "kutnahora_arena_submissions_total",
            "SubmitBot calls by outcome: created (a new version), existing (an archive submitted before), "
            "invalid (refused: the archive, its manifest or the pools), over_allowance "
            "(--submissions-per-day).",
            ["outcome"],
            registry=self.registry,
        )
        self.builds = Counter(
            "kutnahora_arena_builds_total",
            "Builds reported by the sandbox workers, by outcome (ok, failed).",
            ["outcome"],
            registry=self.registry,
        )
        self.live_leases = Gauge(
            "kutnahora_arena_live_leases",
            "The sandbox workers' live leases, by kind (build, host).",
            ["kind"],
            registry=self.registry,
        )
        self.hosted_seats = Counter(
            "kutnahora_arena_hosted_seats_total",
            "Hosted seats reported by the sandbox workers, by outcome (started, finished, failed).",
            ["outcome"],
            registry=self.registry,
        )
