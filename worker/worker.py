"""The worker's main loop: lease work while it has free slots, run each job, stop cleanly.

A worker has ``seats`` host slots (bots hosted at once, each playing one game at a time) and ``builds``
build slots. While a slot is free it asks the arena for work (``LeaseWork`` with ``can_build`` and
``can_host`` saying which slots are free); with none to give, the arena says when to ask again. An arena
that cannot be reached is asked again with a growing pause, each failure said in the log. A refusal that
asking again cannot cure (a wrong worker token, an arena without hosting) ends the worker with the arena's
sentence (:class:`WorkerRefused`).

:meth:`Worker.stop` (SIGTERM, SIGINT) stops leasing and every job at once: the seeks are withdrawn, the
bots are stopped (their games go on with the game server's clock), the leases are released; then the
connections are closed. The sandbox (its control groups and tmpfs) is the caller's to close.
"""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from kutnahora.clients.sdk import ClientError, ConnectError
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.worker import build_job
from kutnahora.worker.context import BACKOFF, Context, Stopped, until
from kutnahora.worker.host_job import HostJob

FATAL = (
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
)
STOP_SECONDS = 30.0  # the longest wait for the jobs to stop and release their leases


class WorkerRefused(Exception):
    """The arena refuses this worker (its token, or hosting not enabled); the message is the arena's."""


class Worker:
    """Leases and runs work until stopped (see the module's docstring)."""

    def __init__(self, context: Context, *, seats: int, builds: int) -> None:
        self.context = context
        self.seats = seats
        self.builds = builds
        self._hosts: set[asyncio.Task[None]] = set()
        self._builds: set[asyncio.Task[None]] = set()
        self._freed = asyncio.Event()

    def stop(self) -> None:
        """Stop leasing and every job (safe to call from a signal handler, more than once)."""
        self.context.stopping.set()

    async def run(self) -> None:
        """Lease and run work until :meth:`stop`; :class:`WorkerRefused` if the arena refuses the worker."""
        context = self.context
        context.log.info("worker started", worker=context.name, seats=self.seats, builds=self.builds)
        delay = BACKOFF[0]
        try:
            while not context.stopping.is_set():
                can_build = len(self._builds) < self.builds
                can_host = len(self._hosts) < self.seats
                if not (can_build or can_host):
                    self._freed.clear()
                    with contextlib.suppress(Stopped):
                        await until(self._freed.wait(), context.stopping)
                    continue
                try:
                    response = await until(
                        context.hosting.lease_work(context.name, can_build=can_build, can_host=can_host),
                        context.stopping,
                    )
                except Stopped:
                    break
                except ConnectError as error:
                    context.metrics.arena_errors.inc()
                    context.log.warning(
                        "the arena cannot be reached; asking for work again",
                        arena=context.hosting.address,
                        retry_in=delay,
                        error=str(error),
                    )
                    await self._pause(delay)
                    delay = min(delay * 2, BACKOFF[1])
                    continue
                except ClientError as error:
                    if error.code in FATAL:
                        raise WorkerRefused(str(error)) from None
                    context.log.warning("the arena refused to lease work", retry_in=delay, error=str(error))
                    await self._pause(delay)
                    delay = min(delay * 2, BACKOFF[1])
                    continue
                delay = BACKOFF[0]
                self._start(response)
                if not response.lease_id:
                    wait = (
                        response.retry_after.ToTimedelta().total_seconds()
                        if response.HasField("retry_after")
                        else 2.0
                    )
                    await self._pause(max(wait, 0.1))
        finally:
            context.stopping.set()
            await self._wait_for_jobs()
            context.log.info("worker stopped")

    def _start(self, response: pb.LeaseWorkResponse) -> None:
        if not response.lease_id:
            return
        seconds = (
            response.lease_time.ToTimedelta().total_seconds() if response.HasField("lease_time") else 30.0
        )
        which = response.WhichOneof("work")
        if which == "build":
            task = asyncio.create_task(
                build_job.run(self.context, response.lease_id, seconds, response.build)
            )
            self._track(task, self._builds)
        elif which == "host":
            job = HostJob(self.context, response.lease_id, seconds, response.host)
            self._track(asyncio.create_task(job.run()), self._hosts)
        else:
            self.context.log.warning("a lease without work; releasing it", lease=response.lease_id[:8])
            self._track(
                asyncio.create_task(
                    build_job.release(self.context, response.lease_id, "no work in the lease")
                ),
                self._builds,
            )

    def _track(self, task: asyncio.Task[None], slots: set[asyncio.Task[None]]) -> None:
        slots.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            slots.discard(finished)
            self._freed.set()
            if not finished.cancelled() and finished.exception() is not None:
                error = finished.exception()
                self.context.log.error("a job failed", error=f"{type(error).__name__}: {error}")

        task.add_done_callback(done)

    async def _pause(self, seconds: float) -> None:
        """Wait ``seconds`` (less if the worker stops)."""
        with contextlib.suppress(Stopped):
            await until(asyncio.sleep(seconds), self.context.stopping)

    async def _wait_for_jobs(self) -> None:
        jobs = [*self._hosts, *self._builds]
        if not jobs:
            return
        _, late = await asyncio.wait(jobs, timeout=STOP_SECONDS)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
