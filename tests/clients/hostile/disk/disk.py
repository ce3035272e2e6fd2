"""Writes until the disk is full: in /tmp (capped), then in its own folder (read-only)."""

import sys

written = 0
chunk = b"x" * (1 << 20)
try:
    for index in range(100_000):
        with open(f"/tmp/fill{index}", "wb") as handle:
            for _ in range(8):
                handle.write(chunk)
                written += len(chunk)
    print(f"LEAKED wrote {written} bytes")
except OSError as error:
    print(f"BLOCKED writing /tmp after {written >> 20} MiB: {error.strerror}")
try:
    with open("/bot/fill", "wb") as handle:
        handle.write(chunk)
    print("LEAKED wrote its own folder")
except OSError as error:
    print(f"BLOCKED writing /bot: {error.strerror}", flush=True)
sys.exit(6)
