"""Looks for the host: the paths in targets.txt (the runner's checkout, its home, ...) listed and read;
then where its kutnahora package comes from and where its mounts come from (/proc/self/mountinfo); then
plays its seat with the greedy bot."""

import os
import sys
from pathlib import Path

for target in Path("targets.txt").read_text().split():
    try:
        print(f"listed {target}: {sorted(os.listdir(target))}", flush=True)
    except OSError as error:
        print(f"BLOCKED list {target}: {error.strerror}", flush=True)
    try:
        with open(target, "rb") as handle:
            handle.read(16)
        print(f"LEAKED read {target}", flush=True)
    except OSError as error:
        print(f"BLOCKED read {target}: {error.strerror}", flush=True)
import kutnahora.clients  # noqa: E402

print("package at", os.path.dirname(kutnahora.clients.__file__), flush=True)
with open("/proc/self/mountinfo") as mounts:  # each mount's source, as its filesystem names it
    print("mount sources", sorted({line.split()[3] for line in mounts}), flush=True)
print("home holds", sorted(os.listdir("/root")) if os.path.isdir("/root") else [], flush=True)
os.execvp(sys.executable, [sys.executable, "-m", "kutnahora.clients.bots.cli", "greedy"])
