"""Forks until it cannot, each child sleeping for ever."""

import os
import sys
import time

children = 0
try:
    for _ in range(100_000):
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        children += 1
    print(f"LEAKED forked {children} processes")
except OSError as error:
    print(f"BLOCKED fork after {children} children: {error}", flush=True)
    sys.exit(5)
