"""A build job: build a hosted version (once per digest on this worker), upload the built folder for the
other workers (:meth:`kutnahora.worker.builds.Builder.publish`), and report the result, the log and the
built folder's digest.

The lease is renewed while the version is fetched and built. A lost lease stops the build at once and
nothing is reported (the version goes back to be built elsewhere); a stopping worker releases the lease.
A version whose archive cannot be fetched is released with the reason, to be tried again.
"""

from __future__ import annotations

from kutnahora.clients.sdk import ClientError
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.worker.context import Context, Stopped, retrying, until
from kutnahora.worker.leases import LeaseKeeper


async def run(context: Context, lease_id: str, lease_time: float, job: pb.BuildJob) -> None:
    """Build ``job``'s version and report it under ``lease_id``."""
    log = context.log.bind(lease=lease_id[:8], bot=job.bot_name, version=job.version, job="build")
    keeper = LeaseKeeper(context.hosting, lease_id, lease_time, log).start()
    context.metrics.leases.labels("build").inc()
    released = ""
    try:
        log.info("building", digest=job.digest[:12])
        try:
            built = await until(context.builder.build(job.digest), keeper.lost, context.stopping)
        except ClientError as error:
            released = f"the worker could not fetch the archive: {error}"
            log.warning("cannot fetch the archive", error=str(error))
            return
        context.metrics.builds.labels("ok" if built.ok else "failed").inc()

        shared = ""
        if built.ok:

            async def publish() -> str:
                return await context.builder.publish(job.digest, lease_id, job.built_max_bytes)

            shared = await retrying(
                publish, "uploading a built folder", context, keeper.lost, context.stopping
            )

        async def report() -> None:
            await context.hosting.report_build(
                lease_id, ok=built.ok, reason=built.reason, log=built.log, built_digest=shared
            )

        await retrying(report, "reporting a build", context, keeper.lost, context.stopping)
        log.info("build reported", ok=built.ok, built=shared[:12] or None)
    except Stopped:
        released = "the worker is stopping" if context.stopping.is_set() else ""
    except ClientError as error:
        log.warning("the arena refused the build's report", error=str(error))
    except Exception as error:  # the worker's own fault: the version goes back, to be built again
        released = f"the worker failed: {type(error).__name__}: {error}"
        log.exception("the build job failed")
    finally:
        await keeper.stop()
        context.metrics.leases.labels("build").dec()
        if released and not keeper.lost.is_set():
            await release(context, lease_id, released)


async def release(context: Context, lease_id: str, reason: str) -> None:
    """End a lease before its time, once (an arena that cannot be reached lets it expire instead)."""
    try:
        await context.hosting.release(lease_id, reason)
    except ClientError as error:
        context.log.warning("cannot release a lease; it will expire", lease=lease_id[:8], error=str(error))
