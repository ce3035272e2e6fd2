"""Server reflection answers as ``grpc.reflection.v1`` too (tools that speak only v1 find the services)."""

from __future__ import annotations

from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from tests.server.conftest import Client

V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


async def test_reflection_v1_lists_and_describes_the_services(client: Client) -> None:
    # v1's messages are v1alpha's, field for field; only the service's package differs
    call = client.channel.stream_stream(
        V1_METHOD,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    requests = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="kutnahora.v1.GameService"),
    ]
    responses = [response async for response in call(iter(requests))]
    names = {service.name for service in responses[0].list_services_response.service}
    assert {"kutnahora.v1.GameService", "grpc.reflection.v1.ServerReflection"} <= names
    assert "grpc.reflection.v1alpha.ServerReflection" in names
    files = responses[1].file_descriptor_response.file_descriptor_proto
    described = [descriptor_pb2.FileDescriptorProto.FromString(raw) for raw in files]
    assert any(f.name == "kutnahora/v1/game_service.proto" for f in described)
