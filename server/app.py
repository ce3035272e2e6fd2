"""Assemble a server: store, hub, servicers, health, reflection, metrics endpoint.

:func:`create_server` binds the address (port 0 picks a free port, which tests use) and returns the
server with the port it got; :meth:`GameServer.start` opens the store, begins the recovery of unfinished
games and starts serving; :meth:`GameServer.stop` shuts down gracefully: it stops accepting calls, lets
calls in flight finish within the grace period, ends every stream, and flushes and closes the store.
``grpc.so_reuseport`` is off, so a second server on a taken port fails loudly instead of sharing it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2

import kutnahora
from kutnahora.engine import RULES_VERSION, components_hash, default_components
from kutnahora.plumbing import health as health_service
from kutnahora.plumbing import logs
from kutnahora.plumbing.errors import StartupError
from kutnahora.plumbing.keepalive import ACCEPT_PINGS, handshake, idle, server_pings
from kutnahora.plumbing.probes import ProbeGuard
from kutnahora.plumbing.reflection import add_reflection
from kutnahora.plumbing.tls import bind_port
from kutnahora.server.config import ServerConfig
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics, MetricsEndpoint
from kutnahora.server.replication import ReplicaSync
from kutnahora.server.service import KutnaHoraService
from kutnahora.server.store import (
    MemoryStore,
    PostgresStore,
    SqliteStore,
    Store,
    StoreError,
    is_postgres_url,
)


def make_store(config: ServerConfig, metrics: Metrics) -> Store:
    """The store the configuration names: SQLite at ``config.db``, or memory for ``:memory:``."""
    if config.db in ("", ":memory:"):
        return MemoryStore()
    if is_postgres_url(config.db):
        return PostgresStore(config.db, on_commit=metrics.on_commit)
    return SqliteStore(config.db, config.db_synchronous, on_commit=metrics.on_commit)


class GameServer:
    """A running (or ready to run) Kutná Hora server."""

    def __init__(
        self,
        server: grpc.aio.Server,
        port: int,
        config: ServerConfig,
        hub: GameHub,
        service: KutnaHoraService,
        metrics: Metrics,
        health_servicer: Any,
        log: Any,
    ) -> None:
        self.grpc_server = server
        self.port = port
        self.config = config
        self.hub = hub
        self.service = service
        self.metrics = metrics
        self.health = health_servicer
        self.log = log
        self.metrics_endpoint: MetricsEndpoint | None = None
        self.replication = ReplicaSync(hub.games, hub.store, log)
        self._stopped = asyncio.Event()

    @property
    def metrics_port(self) -> int | None:
        """The port of the ``/metrics`` endpoint, once started (None when disabled)."""
        return self.metrics_endpoint.port if self.metrics_endpoint is not None else None

    async def start(self) -> None:
        """Open the store, start recovering unfinished games, and serve.

        Raises :class:`StartupError` when the store cannot be opened or the metrics port is taken.
        """
        try:
            await self.hub.store.open()
        except StoreError as error:
            raise StartupError(str(error)) from None
        self.replication.start()  # when other replicas share the store: follow their writes
        if self.config.metrics_port is not None:
            host, port = self.config.metrics_host, self.config.metrics_port
            try:
                self.metrics_endpoint = MetricsEndpoint(self.metrics, host, port)
            except OSError as error:
                raise StartupError(
                    f"cannot serve metrics on {host}:{port}: {error.strerror or error}"
                ) from None
        self.metrics.signals.start(self.service.sample)
        await self.grpc_server.start()
        await self.hub.quotas.store.check()
        await self.service.seats.start()
        self.hub.start_recovery()
        for name in ("", *KutnaHoraService.service_names()):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def stop(self, grace: float | None = None) -> None:
        """Stop gracefully: refuse new calls, finish those in flight, end streams, flush the store."""
        if self._stopped.is_set():
            return
        grace = self.config.grace_seconds if grace is None else grace
        await self.health.enter_graceful_shutdown()
        self.service.stop_streams()
        await self.hub.close()
        await self.grpc_server.stop(grace)
        await self.replication.close()
        await self.hub.store.close()
        await self.service.seats.close()
        await self.hub.quotas.store.close()
        await self.metrics.signals.stop()
        if self.metrics_endpoint is not None:
            self.metrics_endpoint.close()
        self._stopped.set()
        self.log.info("server stopped")

    async def wait_for_termination(self) -> None:
        """Wait until :meth:`stop` has finished."""
        await self._stopped.wait()


PENDING_REQUESTS = 16_384
"""Calls that may wait to be taken up; past it gRPC cancels those that waited long (its default is 1,000)."""
PENDING_REQUESTS_HARD_LIMIT = 32_768
"""Calls that may wait at most; past it gRPC refuses new calls at once (its default is 3,000)."""


def server_options(config: ServerConfig) -> list[tuple[str, int]]:
    """gRPC's channel arguments for the server: message sizes, pings both ways
    (:mod:`kutnahora.plumbing.keepalive`), and the connection age."""
    limit = config.limits.max_message_bytes
    options = [
        ("grpc.so_reuseport", 0),
        ("grpc.max_receive_message_length", limit),
        ("grpc.max_send_message_length", max(limit, 16 << 20)),
        *ACCEPT_PINGS,
        # Calls that arrived and wait for the server to take them up: gRPC cancels, with a bare CANCELLED,
        # calls that arrive while more than 1,000 wait (its default), so a burst of a few thousand Play
        # streams opened at once lost a third of them. These limits let such a burst queue instead.
        ("grpc.server.max_pending_requests", PENDING_REQUESTS),
        ("grpc.server.max_pending_requests_hard_limit", PENDING_REQUESTS_HARD_LIMIT),
    ]
    options += server_pings(config.keepalive_seconds, config.keepalive_timeout_seconds)
    options += handshake(config.handshake_timeout_seconds)
    options += idle(config.max_connection_idle_seconds)
    if config.max_connection_age_seconds > 0:
        options.append(("grpc.max_connection_age_ms", int(config.max_connection_age_seconds * 1000)))
        options.append(
            ("grpc.max_connection_age_grace_ms", int(config.max_connection_age_grace_seconds * 1000))
        )
    return options


async def create_server(
    address: str = "127.0.0.1:0", config: ServerConfig | None = None
) -> tuple[GameServer, int]:
    """Build a server bound to ``address`` (``host:port``; port 0 picks one) and return it with its port.

    Call :meth:`GameServer.start` to serve and :meth:`GameServer.stop` to stop.
    """
    config = config or ServerConfig()
    log = logs.get_logger("kutnahora.server")
    metrics = Metrics()
    components = config.components or default_components()
    store = make_store(config, metrics)
    hub = GameHub(config, store, metrics, components, log)
    service = KutnaHoraService(hub, config, metrics, log)
    metrics.build_info.labels(
        version=kutnahora.__version__,
        rules_version=str(RULES_VERSION),
        components=components_hash(components),
        compiled=str(kutnahora.compiled_modules() == kutnahora.COMPILABLE).lower(),
    ).set(1)
    server = grpc.aio.server(options=server_options(config))
    server.add_generic_rpc_handlers(tuple(service.handlers()))
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]  # an implicit re-export
    guard = ProbeGuard(on_refusal=lambda limit: metrics.refused.labels(limit=limit).inc())
    server.add_generic_rpc_handlers((health_service.handler(health_servicer, guard),))
    add_reflection(
        server,
        (*KutnaHoraService.service_names(), health_pb2.DESCRIPTOR.services_by_name["Health"].full_name),
        guard,
    )
    port = bind_port(server, address, config.tls_cert, config.tls_key)
    if config.unix_socket and not server.add_insecure_port(f"unix:{config.unix_socket}"):
        raise OSError(f"could not bind the Unix socket {config.unix_socket}")
    return GameServer(server, port, config, hub, service, metrics, health_servicer, log), port
