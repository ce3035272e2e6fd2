"""The standard health service (``grpc.health.v1.Health``), registered so that it decodes its own requests.

grpcio-health-checking's servicer holds the statuses and answers ``Check`` and ``Watch``. Registered with
the library's own handler, a request body that does not decode fails inside gRPC before the servicer runs
and is answered UNKNOWN; here the handler receives the raw bytes, decodes them like every other method of
the server (INVALID_ARGUMENT with a sentence and its ``ErrorInfo``), and then hands the request to the
library's servicer. An unknown service name is NOT_FOUND with a sentence naming it. Its calls and open
``Watch`` streams are bounded (:mod:`kutnahora.plumbing.probes`).
"""

from __future__ import annotations

from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2

from kutnahora.plumbing import status
from kutnahora.plumbing.errors import ServiceError
from kutnahora.plumbing.messages import decode, serialize
from kutnahora.plumbing.probes import ProbeGuard

SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name


def handler(servicer: Any, guard: ProbeGuard) -> grpc.GenericRpcHandler[Any, Any]:
    """The generic handler of ``grpc.health.v1.Health`` over ``servicer`` (the library's aio servicer),
    its calls counted and its ``Watch`` streams held by ``guard``."""

    async def check(body: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await guard.count(context, "Health.Check")
        request = await _request(body, context)
        if request.service not in servicer._server_status:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"this server reports no health for service {request.service!r}"
            )
        return await servicer.Check(request, context)

    async def watch(body: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        async with guard.stream(context, "Health.Watch"):
            request = await _request(body, context)
            await servicer.Watch(request, context)  # writes each status with context.write

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Check": grpc.unary_unary_rpc_method_handler(check, None, serialize),
            "Watch": grpc.unary_stream_rpc_method_handler(watch, None, serialize),
        },
    )


async def _request(body: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> health_pb2.HealthCheckRequest:
    """The request decoded; the call ends INVALID_ARGUMENT with a sentence when it does not decode."""
    try:
        return decode(health_pb2.HealthCheckRequest, body)
    except ServiceError as error:
        await context.abort(error.code, error.message, trailing_metadata=status.status_details(error))
        raise  # not reached: abort raises
