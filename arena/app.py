"""Assemble an arena: store, game servers, lobby, servicers (the bots' and the sandbox workers'), health,
reflection, metrics, house bots.

:func:`create_arena` binds the address (port 0 picks one; TLS with ``tls_cert`` and ``tls_key``) and
returns the arena and its port; :meth:`Arena.start` opens the store, follows the games left active, starts
matchmaking, the metrics endpoint and the house bots, and serves; :meth:`Arena.stop` undoes it all
gracefully. Beside a TLS port the house bots get a plain one of their own, on loopback.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2
from prometheus_client import start_http_server

from kutnahora.arena.built import BUILT_MAX_BYTES
from kutnahora.arena.hosting import HostingServicer
from kutnahora.arena.house import HouseBot, HouseBots
from kutnahora.arena.lobby import Lobby
from kutnahora.arena.matchmaker import Window
from kutnahora.arena.metrics import ArenaMetrics
from kutnahora.arena.pools import DEFAULT_POOLS, Pool, parse_pools
from kutnahora.arena.quotas import ArenaQuotas
from kutnahora.arena.servers import POLL_SECONDS, GameServers
from kutnahora.arena.service import ArenaServicer
from kutnahora.arena.store import ArenaStore
from kutnahora.hosting.archives import ARCHIVE_CAP
from kutnahora.plumbing import health as health_service
from kutnahora.plumbing import logs
from kutnahora.plumbing.callers import DEFAULT_EXEMPT, Network
from kutnahora.plumbing.errors import StartupError, StoreError
from kutnahora.plumbing.keepalive import (
    ACCEPT_PINGS,
    DEFAULT_HANDSHAKE_SECONDS,
    DEFAULT_IDLE_SECONDS,
    DEFAULT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    handshake,
    idle,
    server_pings,
)
from kutnahora.plumbing.probes import ProbeGuard
from kutnahora.plumbing.quota_store import MEMORY, QuotaStore
from kutnahora.plumbing.reflection import add_reflection
from kutnahora.plumbing.signals import Signals
from kutnahora.plumbing.tls import bind_port
from kutnahora.v1 import (
    arena_service_pb2,
    arena_service_pb2_grpc,
    hosting_service_pb2,
    hosting_service_pb2_grpc,
)

SERVICE_NAME = arena_service_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name
HOSTING_SERVICE_NAME = hosting_service_pb2.DESCRIPTOR.services_by_name["HostingService"].full_name
MAX_MESSAGE_BYTES = ARCHIVE_CAP + (1 << 20)
"""The largest message the arena receives: a SubmitBot of the largest archive taken, and some."""


@dataclass(slots=True)
class ArenaConfig:
    """How an arena runs."""

    servers: list[str]
    db: str = "kutnahora-arena.db"
    pools: dict[str, Pool] = field(default_factory=lambda: parse_pools(DEFAULT_POOLS))
    registration: str = "open"
    admin_token: str = ""
    server_token: str = ""  # sent to the game servers with each game created: their --quota-token
    register_rate: float = 2.0
    """Registrations one caller may make per minute on average (0: no limit)."""
    register_burst: int = 10
    """Registrations one caller may make at once above ``register_rate``."""
    caller_rate: float = 20.0
    """Calls one caller may make per second on average, every call but RegisterBot (a Seek or StreamEvents
    counts as it opens); 0: no limit."""
    caller_burst: int = 200
    """Calls one caller may make at once above ``caller_rate``."""
    caller_streams: int = 100
    """Seek and StreamEvents streams one caller may hold open at once, per replica; 0: no limit."""
    quota_store: str = MEMORY
    """Where the per-caller counts live: ``memory`` (each replica its own) or a ``redis://`` URL every
    replica shares (:mod:`kutnahora.plumbing.quota_store`)."""
    quota_store_prefix: str = "kutnahora"
    """What the keys of ``quota_store`` start with (then ``:arena``)."""
    quota_exempt: tuple[str, ...] = DEFAULT_EXEMPT
    """The callers the per-caller limits do not count (:func:`kutnahora.plumbing.callers.parse_exempt`); a
    call carrying the admin token is never counted."""
    trusted_proxies: tuple[Network, ...] = ()
    """Reverse proxies whose calls are counted as the caller's their ``x-forwarded-for`` names
    (:func:`kutnahora.plumbing.callers.forwarded_address`); none: the header is ignored."""
    house_bots: list[HouseBot] = field(default_factory=list)
    window: Window = field(default_factory=Window)
    tick_seconds: float = 0.2
    status_seconds: float = 1.0
    lost_after_seconds: float = 20.0
    poll_seconds: float = POLL_SECONDS
    """Seconds between two questions to a game server about a game the arena follows, while none of its
    bots seeks again in its pool (then it is asked within half a second)."""
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    grace_seconds: float = 5.0
    keepalive_seconds: float = DEFAULT_SECONDS
    """Seconds between the arena's pings on each connection (0: none)."""
    keepalive_timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    """Seconds the arena waits for the answer to its ping before closing the connection and its streams."""
    handshake_timeout_seconds: float = DEFAULT_HANDSHAKE_SECONDS
    """Seconds a new connection has to complete its opening before the arena closes it."""
    max_connection_idle_seconds: float = DEFAULT_IDLE_SECONDS
    """Seconds a connection may hold no call before the arena closes it (0: never)."""
    worker_token: str = ""
    """The token the sandbox workers' HostingService calls carry (empty: the arena hosts no bots)."""
    submissions_per_day: int = 20
    """New versions of its hosted code one bot may submit in 24 hours."""
    hosted_games_per_hour: int = 60
    """Hosted games one bot may start in an hour."""
    hosted_games_per_lease: int = 5
    """Games one host lease may start: then the worker releases it, and bots take turns on the workers."""
    hosted_max_failures: int = 3
    """Failed hosted seats in a row that pause a bot."""
    lease_seconds: float = 30.0
    """How long a worker's lease lives without a renewal."""
    built_max_bytes: int = BUILT_MAX_BYTES
    """The largest built folder (a gzip'd tar) a worker may upload, in bytes (0: none is kept)."""
    tls_cert: str | None = None
    """The PEM certificate chain of the arena's port: with ``tls_key`` it serves TLS (else plain)."""
    tls_key: str | None = None
    """The PEM private key of ``tls_cert``."""


class Arena:
    """A running (or ready to run) arena."""

    def __init__(
        self, server: grpc.aio.Server, port: int, config: ArenaConfig, log: Any, house_port: int | None = None
    ) -> None:
        self.grpc_server = server
        self.port = port
        self.house_port = port if house_port is None else house_port
        """The port the house bots reach on 127.0.0.1: the arena's own, or beside a TLS port a plain one
        bound on loopback for them alone."""
        self.config = config
        self.log = log
        self.metrics = ArenaMetrics()
        self.store = ArenaStore(config.db)
        self.servers = GameServers(
            config.servers,
            lost_after=config.lost_after_seconds,
            poll=config.poll_seconds,
            quota_token=config.server_token or None,
        )
        self.lobby = Lobby(
            self.store,
            self.servers,
            config.pools,
            self.metrics,
            log,
            window=config.window,
            tick=config.tick_seconds,
        )
        self.servicer = ArenaServicer(
            self.store,
            self.lobby,
            registration=config.registration,
            admin_token=config.admin_token,
            quotas=ArenaQuotas(
                register_rate=config.register_rate,
                register_burst=config.register_burst,
                caller_rate=config.caller_rate,
                caller_burst=config.caller_burst,
                caller_streams=config.caller_streams,
                exempt=config.quota_exempt,
                tokens=(config.admin_token,),
                log=log,
                trusted_proxies=config.trusted_proxies,
                store=QuotaStore(
                    config.quota_store,
                    f"{config.quota_store_prefix}:arena",
                    log=log,
                    on_error=self.metrics.quota_store_errors.inc,
                ),
            ),
            status_interval=config.status_seconds,
            log=log,
            submissions_per_day=config.submissions_per_day,
        )
        generated: Any = arena_service_pb2_grpc  # the generated gRPC code is untyped
        generated.add_ArenaServiceServicer_to_server(self.servicer, server)
        self.hosting = HostingServicer(
            self.store,
            sorted(config.pools),
            worker_token=config.worker_token,
            lease_seconds=config.lease_seconds,
            games_per_hour=config.hosted_games_per_hour,
            games_per_lease=config.hosted_games_per_lease,
            max_failures=config.hosted_max_failures,
            built_max_bytes=config.built_max_bytes,
            metrics=self.metrics,
            log=log,
        )
        hosting_generated: Any = hosting_service_pb2_grpc
        hosting_generated.add_HostingServiceServicer_to_server(self.hosting, server)
        self.health: Any = health.aio.HealthServicer()  # type: ignore[attr-defined]  # an implicit re-export
        guard = ProbeGuard(on_refusal=lambda limit: self.metrics.refusals.labels(reason=limit).inc())
        server.add_generic_rpc_handlers((health_service.handler(self.health, guard),))
        add_reflection(
            server,
            (SERVICE_NAME, HOSTING_SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name),
            guard,
        )
        self.house = HouseBots(config.house_bots, self.store, sorted(config.pools), log)
        self.metrics_port: int | None = None
        self._metrics_server: Any = None
        self._stopped = asyncio.Event()
        self.signals: Signals | None = None

    async def start(self) -> None:
        """Open the store and serve; :class:`StartupError` when the store or the metrics port fails."""
        try:
            await self.store.open()
        except StoreError as error:
            raise StartupError(str(error)) from None
        await self.servicer.quotas.store.check()
        if self.config.metrics_port is not None:
            try:
                self._metrics_server, _ = start_http_server(
                    self.config.metrics_port, addr=self.config.metrics_host, registry=self.metrics.registry
                )
            except OSError as error:
                raise StartupError(
                    f"cannot serve metrics on port {self.config.metrics_port}: {error}"
                ) from None
            self.metrics_port = int(self._metrics_server.server_port)
        self.signals = Signals(self.metrics.registry).start()  # event-loop lag, collector pauses
        await self.lobby.start()
        self.hosting.start()
        await self.grpc_server.start()
        for name in ("", SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        await self.house.start(f"127.0.0.1:{self.house_port}")

    async def stop(self, grace: float | None = None) -> None:
        """Stop the house bots, matchmaking and serving; close the store."""
        if self._stopped.is_set():
            return
        await self.health.enter_graceful_shutdown()
        await self.house.stop()
        await self.grpc_server.stop(self.config.grace_seconds if grace is None else grace)
        await self.lobby.close()
        await self.hosting.close()
        await self.servers.close()
        await self.store.close()
        await self.servicer.quotas.store.close()
        if self.signals is not None:
            await self.signals.stop()
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
        self._stopped.set()
        self.log.info("arena stopped")

    async def wait_for_termination(self) -> None:
        """Wait until :meth:`stop` has finished."""
        await self._stopped.wait()


async def create_arena(address: str, config: ArenaConfig) -> tuple[Arena, int]:
    """An arena bound to ``address`` (``host:port``; port 0 picks one), and its port."""
    server = grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 0),
            # Bots hold Seek and StreamEvents streams open for long, quiet stretches: their pings are
            # accepted, and the arena's own find the bots that vanished, whose streams it then closes.
            *ACCEPT_PINGS,
            *server_pings(config.keepalive_seconds, config.keepalive_timeout_seconds),
            *handshake(config.handshake_timeout_seconds),
            *idle(config.max_connection_idle_seconds),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ]
    )
    port = bind_port(server, address, config.tls_cert, config.tls_key)
    house_port = None
    if config.house_bots and config.tls_cert and config.tls_key:
        # The house bots are processes of this machine: they reach the arena on a plain port of their own,
        # on loopback only, so that their keys never leave the machine and no certificate need name it.
        house_port = bind_port(server, "127.0.0.1:0", None, None)
    return Arena(server, port, config, logs.get_logger("kutnahora.arena"), house_port), port
