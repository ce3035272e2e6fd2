"""A gRPC health probe for the container image: ``python -m kutnahora.server.healthcheck``.

It asks the standard ``grpc.health.v1.Health/Check`` of a running server and exits 0 when the answer is
SERVING, 1 otherwise (NOT_SERVING, unreachable, timed out). The container's HEALTHCHECK and the compose
file use it; Kubernetes uses its own built-in gRPC probe against the same service instead.

It leaves the health service itself (which statuses a server reports, and when) to the server.
"""

from __future__ import annotations

import argparse
import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

DEFAULT_PORT = 50051


def check(address: str, service: str = "", timeout: float = 3.0) -> str:
    """Returns the serving status name that the server at ``address`` reports for ``service``."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


def main(argv: list[str] | None = None) -> int:
    """Runs the probe; the exit status is 0 only when the server reports SERVING."""
    parser = argparse.ArgumentParser(prog="python -m kutnahora.server.healthcheck", description=__doc__)
    parser.add_argument(
        "--address",
        default=os.environ.get(
            "KUTNAHORA_HEALTH_ADDRESS", f"127.0.0.1:{os.environ.get('KUTNAHORA_PORT', DEFAULT_PORT)}"
        ),
        help="host:port of the server's gRPC port (default: 127.0.0.1:$KUTNAHORA_PORT)",
    )
    parser.add_argument("--service", default="", help="the health service name; empty means the server")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for the answer")
    args = parser.parse_args(argv)
    try:
        status = check(args.address, args.service, args.timeout)
    except grpc.RpcError as error:
        print(f"unhealthy: {args.address}: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    print(f"{args.address}: {status}")
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
