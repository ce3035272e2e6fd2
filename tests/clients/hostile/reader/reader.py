"""Tries to read files it must not see: paths listed in targets.txt (another submission, the database)."""

import os
import sys
from pathlib import Path

for target in Path("targets.txt").read_text().split():
    try:
        with open(target, "rb") as handle:
            handle.read(16)
        print(f"LEAKED read {target}")
    except OSError as error:
        print(f"BLOCKED read {target}: {error.strerror}")
print("visible at /:", sorted(os.listdir("/")))
try:
    Path("/bot/written.txt").write_text("x")
    print("LEAKED wrote its own folder")
except OSError as error:
    print(f"BLOCKED write /bot: {error.strerror}")
sys.exit(3)
