"""A self-signed certificate for TLS tests (made with the openssl command, for localhost)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

needs_openssl = pytest.mark.skipif(
    shutil.which("openssl") is None, reason="openssl is needed to make a test certificate"
)


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A private key and a self-signed certificate for localhost and 127.0.0.1: (key, cert)."""
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return key, cert
