"""The services' gRPC port: TLS when given a certificate chain and its private key, plain otherwise.

The game server and the arena bind their public port with :func:`bind_port`, from their ``--tls-cert``
and ``--tls-key`` (both or neither: :func:`pair_problem` says so in a sentence). Plain is for a port that
only this machine reaches, or one behind a front that speaks TLS for it: a bot's API key, a seat's token
and the workers' token travel in the calls' metadata.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import grpc.aio


def pair_problem(cert: str | None, key: str | None) -> str:
    """What is wrong with a certificate and key given on a command line ("" when nothing): one without the
    other."""
    if bool(cert) != bool(key):
        return "--tls-cert and --tls-key must be given together"
    return ""


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise OSError(f"cannot read the TLS {what} {path}: {error.strerror or error}") from None


def server_credentials(cert: str, key: str) -> grpc.ServerCredentials:
    """The credentials of a port serving TLS with the PEM certificate chain in ``cert`` and the PEM private
    key in ``key``; :class:`OSError` naming the file that cannot be read."""
    return grpc.ssl_server_credentials([(_read(key, "key"), _read(cert, "certificate"))])


def bind_port(server: grpc.aio.Server, address: str, cert: str | None, key: str | None) -> int:
    """Bind ``address`` (``host:port``; port 0 picks one) on ``server``: TLS when ``cert`` and ``key`` are
    both given, plain otherwise. The port bound; :class:`OSError` saying why when it cannot be bound, or a
    file read or taken (gRPC says only that it failed to bind)."""
    if cert and key:
        credentials = server_credentials(cert, key)
        try:
            port = server.add_secure_port(address, credentials)
        except RuntimeError:
            raise OSError(
                f"could not serve TLS on {address}: are {cert} and {key} a PEM certificate chain and its "
                "private key? (or the port may be taken)"
            ) from None
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not bind {address}: the port may be taken")
    return port
