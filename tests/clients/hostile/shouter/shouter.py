"""Prints a gigabyte."""

import sys

line = b"y" * 1023 + b"\n"
for _ in range(1 << 20):
    sys.stdout.buffer.write(line)
print("LEAKED printed a gigabyte")
