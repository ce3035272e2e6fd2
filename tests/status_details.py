"""What a refusal carries in its ``google.rpc.Status`` details, read the way a client would."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status


def refusal(error: grpc.aio.AioRpcError) -> tuple[error_details_pb2.ErrorInfo, float | None]:
    """The ErrorInfo of a refusal and its RetryInfo delay in seconds (None without one)."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, "the refusal carries no google.rpc.Status"
    info, delay = None, None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            delay = retry.retry_delay.ToTimedelta().total_seconds()
    assert info is not None and info.domain == "kutnahora.v1"
    return info, delay
