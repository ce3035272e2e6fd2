"""Keeping a lease alive: ``RenewLease`` every third of its time, and what the arena answers.

A :class:`LeaseKeeper` renews one lease until stopped. The arena's answer may ask the worker to wind down
(``wind_down``: the bot was paused, a newer version was built, its games for the hour are used up): the
keeper records the reason and sets :attr:`LeaseKeeper.winding`, and the work ends after its game in
progress. ``NOT_FOUND`` means the lease has expired or was ended: :attr:`LeaseKeeper.lost` is set at
once and the work must stop now (another worker may already hold it). While the arena cannot be reached,
renewal is tried again every second or two; once the lease's time has passed without a renewal, it is
lost too. Any other refusal (a wrong worker token) loses it as well, with the arena's sentence in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import grpc

from kutnahora.clients.sdk import ClientError, ConnectError
from kutnahora.worker.hosting_client import HostingClient

RETRY_SECONDS = 1.5  # between renewals while the arena cannot be reached


class LeaseKeeper:
    """Renews one lease every third of its time until :meth:`stop`."""

    def __init__(self, client: HostingClient, lease_id: str, lease_time: float, log: Any) -> None:
        self.client = client
        self.lease_id = lease_id
        self.lease_time = max(lease_time, 0.3)
        self.log = log
        self.lost = asyncio.Event()
        self.lost_reason = ""
        self.winding = asyncio.Event()
        self.wind_down_reason = ""
        self._expires = time.monotonic() + self.lease_time
        self._task: asyncio.Task[None] | None = None

    def start(self) -> LeaseKeeper:
        """Begin renewing."""
        self._task = asyncio.create_task(self._run(), name=f"renew-{self.lease_id}")
        return self

    async def stop(self) -> None:
        """Stop renewing (the lease is released or reported by its work)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _lose(self, reason: str) -> None:
        self.lost_reason = reason
        self.lost.set()
        self.log.warning("lease lost; its work stops now", reason=reason)

    async def _run(self) -> None:
        delay = self.lease_time / 3
        while True:
            await asyncio.sleep(delay)
            try:
                response = await self.client.renew(self.lease_id)
            except ConnectError as error:
                if time.monotonic() >= self._expires:
                    self._lose(f"the arena could not be reached to renew it before it expired ({error})")
                    return
                self.log.warning("cannot renew the lease; trying again", error=str(error))
                delay = min(RETRY_SECONDS, max(0.1, self._expires - time.monotonic()))
                continue
            except ClientError as error:
                if error.code == grpc.StatusCode.NOT_FOUND:
                    self._lose("the arena says it has expired or ended")
                else:
                    self._lose(str(error))
                return
            if response.HasField("lease_time") and response.lease_time.ToTimedelta().total_seconds() > 0:
                self.lease_time = max(response.lease_time.ToTimedelta().total_seconds(), 0.3)
            self._expires = time.monotonic() + self.lease_time
            delay = self.lease_time / 3
            if response.wind_down and not self.winding.is_set():
                self.wind_down_reason = response.reason or "the arena asked the worker to wind down"
                self.log.info("winding down after the game in progress", reason=self.wind_down_reason)
                self.winding.set()
