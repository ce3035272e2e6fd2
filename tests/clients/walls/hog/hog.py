"""Four children each take HOG_MIB of memory (each alone under the bot's limit, together over it) and
hold it; the parent says how many got there."""

import os
import sys
import time

MIB = 1 << 20
EACH = int(os.environ.get("HOG_MIB", "96"))
children = []
for index in range(4):
    pid = os.fork()
    if pid == 0:
        held = []
        for step in range(EACH // 8):
            held.append(bytearray(os.urandom(1)) * (8 * MIB))  # touched: resident, not only reserved
            print(f"child {index} holds {(step + 1) * 8} MiB", flush=True)
        print(f"child {index} reached {EACH} MiB", flush=True)
        time.sleep(5)
        os._exit(0)
    children.append(pid)
reached = 0
for pid in children:
    _, status = os.waitpid(pid, 0)
    reached += os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    if os.WIFSIGNALED(status):
        print(f"a child was killed by signal {os.WTERMSIG(status)}", flush=True)
if reached == 4:
    print(f"LEAKED four children held {4 * EACH} MiB together", flush=True)
else:
    print(f"BLOCKED only {reached} of 4 children held {EACH} MiB", flush=True)
sys.exit(3)
