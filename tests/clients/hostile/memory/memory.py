"""Allocates 8 GB."""

try:
    block = bytearray(8 << 30)
    print(f"LEAKED allocated {len(block)} bytes")
except MemoryError:
    print("BLOCKED allocating 8 GB: MemoryError", flush=True)
    raise
