"""gRPC server reflection, served by the game server and the arena alike, decoding its own requests.

grpcio-reflection's servicer answers the requests. Registered with the library's own handler, a request
body that does not decode fails inside gRPC before the servicer runs: the call ends UNKNOWN with the
Python exception's name, and gRPC logs a traceback at error level for every such message. Here, as for
health (:mod:`kutnahora.plumbing.health`), the handler receives the raw bytes and decodes each message
like every other method of the services: one that does not decode ends the stream INVALID_ARGUMENT with
a sentence and its ``ErrorInfo``, and nothing is logged. Its streams and requests are bounded
(:mod:`kutnahora.plumbing.probes`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
from grpc_reflection.v1alpha import reflection, reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

from kutnahora.plumbing import status
from kutnahora.plumbing.errors import ServiceError
from kutnahora.plumbing.messages import decode, serialize
from kutnahora.plumbing.probes import ProbeGuard

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
REFLECTION_V1ALPHA: str = reflection.SERVICE_NAME


def add_reflection(server: grpc.aio.Server, services: tuple[str, ...], guard: ProbeGuard) -> None:
    """Serve gRPC server reflection as ``grpc.reflection.v1alpha`` and as ``grpc.reflection.v1``.

    grpcio-reflection implements only v1alpha; v1 has the very same messages (field for field) under
    another package, so the same servicer answers both, and clients of either version find the server's
    services. ``guard`` holds a stream place for each stream and counts each of its requests.
    """
    names = (*services, REFLECTION_V1ALPHA, REFLECTION_V1)
    servicer = ReflectionServicer(names)

    async def info(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        async with guard.stream(context, "ServerReflectionInfo"):
            decoded = _decoded(requests, context, guard)
            async for response in servicer.ServerReflectionInfo(decoded, context):
                yield response

    server.add_generic_rpc_handlers(
        tuple(
            grpc.method_handlers_generic_handler(
                name, {"ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(info, None, serialize)}
            )
            for name in (REFLECTION_V1ALPHA, REFLECTION_V1)
        )
    )


async def _decoded(
    requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any], guard: ProbeGuard
) -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
    """Each request counted and decoded; the call ends INVALID_ARGUMENT with a sentence at one that does
    not decode, RESOURCE_EXHAUSTED past the connection's rate."""
    async for body in requests:
        await guard.count(context, "a reflection request")
        try:
            request = decode(reflection_pb2.ServerReflectionRequest, body)
        except ServiceError as error:
            await context.abort(error.code, error.message, trailing_metadata=status.status_details(error))
            raise  # not reached: abort raises
        yield request
