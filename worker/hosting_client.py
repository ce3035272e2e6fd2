"""The worker's connection to the arena's ``HostingService``, with the worker token on every call.

Every call carries ``authorization: Bearer <worker token>`` and a deadline: off the arena's machine the
channel must be TLS (``kutnahora-arena-worker --tls``, ``--ca-cert``). A failed call raises the
SDK's :class:`~kutnahora.clients.sdk.ClientError` (a :class:`~kutnahora.clients.sdk.ConnectError` when
the arena cannot be reached), whose message says what was being done and why it failed. The archive of a
hosted version is up to 4 MiB, so the channel takes messages of up to 16 MiB; a built folder goes both
ways in chunks of 1 MiB (PutBuilt, GetBuilt), streamed from and to a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc.aio
from google.protobuf.message import Message

from kutnahora.clients.sdk import channel_options, open_channel, rpc_error
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.v1 import hosting_service_pb2_grpc

CALL_SECONDS = 15.0  # the deadline of one call (GetArchive: twice that)
CHUNK_BYTES = 1 << 20  # bytes of a built folder per message
BYTES_PER_SECOND = 1 << 20  # the slowest a built folder's transfer may be, past its first minute
M = TypeVar("M", bound=Message)


class HostingClient:
    """``HostingService`` as the worker calls it: one method per RPC, the token sent with each."""

    def __init__(
        self, address: str, token: str, *, tls: bool = False, root_certificates: bytes | None = None
    ) -> None:
        """Over TLS with ``tls`` or ``root_certificates`` (the PEM CA to trust; None: the system's), plain
        otherwise."""
        self.address = address
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._channel = open_channel(address, channel_options(), tls=tls, root_certificates=root_certificates)
        module: Any = hosting_service_pb2_grpc  # the generated stubs are untyped
        self._stub: Any = module.HostingServiceStub(self._channel)

    async def close(self) -> None:
        """Close the connection."""
        await self._channel.close(grace=None)

    async def _call(self, method: str, request: Message, kind: type[M], doing: str, seconds: float) -> M:
        try:
            response = await getattr(self._stub, method)(request, metadata=self._metadata, timeout=seconds)
        except grpc.aio.AioRpcError as error:
            raise rpc_error(error, doing) from None
        assert isinstance(response, kind)
        return response

    async def lease_work(self, worker: str, *, can_build: bool, can_host: bool) -> pb.LeaseWorkResponse:
        """One piece of work, or none (then ``retry_after`` says when to ask again)."""
        request = pb.LeaseWorkRequest(worker=worker, can_build=can_build, can_host=can_host)
        return await self._call("LeaseWork", request, pb.LeaseWorkResponse, "leasing work", CALL_SECONDS)

    async def renew(self, lease_id: str) -> pb.RenewLeaseResponse:
        """Keep a lease alive; NOT_FOUND once it has expired or been released."""
        request = pb.RenewLeaseRequest(lease_id=lease_id)
        return await self._call(
            "RenewLease", request, pb.RenewLeaseResponse, "renewing a lease", CALL_SECONDS
        )

    async def archive(self, digest: str) -> bytes:
        """The archive whose SHA-256 is ``digest``."""
        response = await self._call(
            "GetArchive",
            pb.GetArchiveRequest(digest=digest),
            pb.GetArchiveResponse,
            f"fetching archive {digest[:12]}",
            2 * CALL_SECONDS,
        )
        return bytes(response.archive)

    async def report_build(
        self, lease_id: str, *, ok: bool, reason: str, log: bytes, built_digest: str = ""
    ) -> None:
        """Report a build's result and log, and the built folder uploaded under its lease (its lease
        ends)."""
        request = pb.ReportBuildRequest(
            lease_id=lease_id, ok=ok, reason=reason, log=log, built_digest=built_digest
        )
        await self._call("ReportBuild", request, pb.ReportBuildResponse, "reporting a build", CALL_SECONDS)

    async def report_seat(self, request: pb.ReportSeatRequest) -> pb.ReportSeatResponse:
        """Report a seat started, finished or failed; says whether the bot is now paused."""
        return await self._call(
            "ReportSeat",
            request,
            pb.ReportSeatResponse,
            f"reporting seat {request.seat} of {request.game_id}",
            CALL_SECONDS,
        )

    async def release(self, lease_id: str, reason: str) -> None:
        """End a lease before its time."""
        request = pb.ReleaseLeaseRequest(lease_id=lease_id, reason=reason)
        await self._call("ReleaseLease", request, pb.ReleaseLeaseResponse, "releasing a lease", CALL_SECONDS)

    async def put_built(self, lease_id: str, artifact: pb.BuiltArtifact, path: Path) -> bool:
        """Upload the built folder packed in ``path`` (``artifact`` says its digest, size and platform)
        under a build lease, in chunks; whether the arena kept it already."""

        async def messages() -> AsyncIterator[pb.PutBuiltRequest]:
            with path.open("rb") as packed:
                first = True
                while True:
                    data = packed.read(CHUNK_BYTES)
                    if first:
                        yield pb.PutBuiltRequest(lease_id=lease_id, artifact=artifact, chunk=data)
                        first = False
                    elif data:
                        yield pb.PutBuiltRequest(chunk=data)
                    if len(data) < CHUNK_BYTES:
                        return

        seconds = 4 * CALL_SECONDS + artifact.size_bytes / BYTES_PER_SECOND
        try:
            response = await self._stub.PutBuilt(messages(), metadata=self._metadata, timeout=seconds)
        except grpc.aio.AioRpcError as error:
            raise rpc_error(error, f"uploading built folder {artifact.digest[:12]}") from None
        return bool(response.existed)

    async def get_built(self, artifact: pb.BuiltArtifact, path: Path) -> str:
        """Write the built folder ``artifact`` names to ``path``, streamed; the SHA-256 of the bytes
        received (the caller compares it with the digest asked for)."""
        doing = f"fetching built folder {artifact.digest[:12]}"
        seconds = 4 * CALL_SECONDS + artifact.size_bytes / BYTES_PER_SECOND
        sha = hashlib.sha256()
        received = 0
        try:
            call = self._stub.GetBuilt(
                pb.GetBuiltRequest(digest=artifact.digest), metadata=self._metadata, timeout=seconds
            )
            with path.open("wb") as out:
                async for message in call:
                    received += len(message.chunk)
                    if received > artifact.size_bytes:
                        call.cancel()
                        break  # more than announced: the digest check refuses it
                    sha.update(message.chunk)
                    out.write(message.chunk)
        except grpc.aio.AioRpcError as error:
            raise rpc_error(error, doing) from None
        return sha.hexdigest() if received == artifact.size_bytes else ""
