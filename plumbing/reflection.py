"""gRPC server reflection, served by the game server and the arena alike."""

from __future__ import annotations

import grpc
import grpc.aio
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def add_reflection(server: grpc.aio.Server, services: tuple[str, ...]) -> None:
    """Serve gRPC server reflection as ``grpc.reflection.v1alpha`` and as ``grpc.reflection.v1``.

    grpcio-reflection implements only v1alpha; v1 has the very same messages (field for field) under
    another package, so the same servicer answers both, and clients of either version find the server's
    services.
    """
    names = (*services, reflection.SERVICE_NAME, REFLECTION_V1)
    servicer = ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    handler = grpc.method_handlers_generic_handler(
        REFLECTION_V1,
        {
            "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
