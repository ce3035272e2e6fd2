"""The web server's connection to its game server, made in the background and made again when it drops.

``kutnahora-web`` may start before its game server (services started together, by compose or Kubernetes):
:class:`Connection` keeps trying with a growing wait (a quarter of a second doubling up to
:data:`LONGEST_WAIT`) and meanwhile every route that needs the game server answers "game server
unavailable" (:meth:`Connection.client` raises a :class:`ClientError` with ``UNAVAILABLE``). Once connected it
checks the connection every :data:`CHECK_EVERY` seconds; when the game server stops or restarts, it drops the
connection and tries again, so the web server recovers without a restart of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import grpc

from kutnahora.clients.sdk import Client, ClientError

log = logging.getLogger(__name__)

FIRST_WAIT = 0.25
LONGEST_WAIT = 5.0
CHECK_EVERY = 1.0


class Connection:
    """A connection to the game server at ``address`` that heals itself; ``on_connect`` runs on each new
    one."""

    def __init__(
        self,
        address: str,
        *,
        tls: bool = False,
        ca_cert: str | None = None,
        on_connect: Callable[[Client], Awaitable[None]] | None = None,
        quota_token: str | None = None,
    ) -> None:
        self.address = address
        self.tls = tls
        self.ca_cert = ca_cert
        self.quota_token = quota_token
        self.on_connect = on_connect
        self._client: Client | None = None
        self.connected = asyncio.Event()
        self.attempts = 0

    @property
    def available(self) -> bool:
        return self._client is not None

    @property
    def client(self) -> Client:
        """The connected client; a ``ClientError`` (UNAVAILABLE, shown as 503) while there is none."""
        if self._client is None:
            raise ClientError(
                f"The game server {self.address} is unavailable; this web server keeps trying to reach it.",
                grpc.StatusCode.UNAVAILABLE,
            )
        return self._client

    async def run(self) -> None:
        """Connect, watch, reconnect: until cancelled."""
        try:
            while True:
                client = await self._connect()
                self._client = client
                self.connected.set()
                log.info("connected to the game server %s", self.address)
                await self._watch(client)
                log.warning("the game server %s is unavailable; reconnecting", self.address)
                self._client = None
                self.connected.clear()
                with contextlib.suppress(Exception):
                    await client.close()
        finally:
            if self._client is not None:
                with contextlib.suppress(Exception):
                    await self._client.close()
                self._client = None

    async def _connect(self) -> Client:
        wait = FIRST_WAIT
        while True:
            self.attempts += 1
            client: Client | None = None
            try:
                # A refusal goes back to the visitor at once (no waiting out its RetryInfo in a request).
                client = await Client.connect(
                    self.address,
                    tls=self.tls,
                    ca_cert=self.ca_cert,
                    timeout=2.0,
                    retry_refused=False,
                    quota_token=self.quota_token,
                )
                if self.on_connect is not None:
                    await self.on_connect(client)
                return client
            except ClientError as error:
                if client is not None:
                    with contextlib.suppress(Exception):
                        await client.close()
                if self.attempts == 1 or wait >= LONGEST_WAIT:
                    log.warning("%s Trying again in %.1f s.", error, wait)
            await asyncio.sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT)

    @staticmethod
    async def _watch(client: Client) -> None:
        """Return when the connection fails (the server stopped, or restarted and refused the old one)."""
        while True:
            await asyncio.sleep(CHECK_EVERY)
            try:
                await client.wait_ready(2.0)
            except ClientError:
                return
