"""Tries to open the network: PostgreSQL's port on loopback, and a public address."""

import socket
import sys

for host, port in (("127.0.0.1", 5432), ("127.0.0.1", 50051), ("10.0.0.1", 80)):
    try:
        socket.create_connection((host, port), timeout=2).close()
        print(f"LEAKED connected to {host}:{port}")
    except OSError as error:
        print(f"BLOCKED connect {host}:{port}: {error}")
sys.exit(4)
