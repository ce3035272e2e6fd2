"""Run a Python module (the game server) with every garbage collection timed, and write what they cost.

    python -m kutnahora.bench.gc_trace pauses.json -- -m kutnahora.server.main --port 0 ...

installs a ``gc.callbacks`` hook that times each collection from its start to its stop (wall time, and the
thread's CPU time: on a loaded machine the difference is the scheduler's), runs the module as
``python -m`` would, and when it exits (SIGTERM included: the server stops cleanly on it) writes to the
file, as JSON, for each generation the number of collections, their total and longest pause, the
objects the collector tracks at the end and when the last long pauses (10 ms and more) happened, in
seconds from the start. ``kutnahora-hold --server-gc-trace FILE`` starts its server this way. The
server's own ``kutnahora_gc_pause_seconds`` histogram measures the same pauses for operators; this is
for an investigation before or without it.
"""

from __future__ import annotations

import atexit
import gc
import json
import runpy
import sys
import time
from pathlib import Path

LONG = 0.010
"""A pause at least this long (seconds) is listed with its time."""


class Pauses:
    """The collections timed so far, by generation."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.began = 0.0
        self.began_cpu = 0.0
        self.count = [0, 0, 0]
        self.total = [0.0, 0.0, 0.0]
        self.longest = [0.0, 0.0, 0.0]
        self.cpu_total = [0.0, 0.0, 0.0]
        self.cpu_longest = [0.0, 0.0, 0.0]
        self.long: list[tuple[float, int, float, int]] = []  # at, generation, seconds, collected

    def callback(self, phase: str, info: dict[str, int]) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if phase == "start":
            self.began, self.began_cpu = now, cpu
            return
        generation = info["generation"]
        took = now - self.began
        self.cpu_total[generation] += cpu - self.began_cpu
        self.cpu_longest[generation] = max(self.cpu_longest[generation], cpu - self.began_cpu)
        self.count[generation] += 1
        self.total[generation] += took
        self.longest[generation] = max(self.longest[generation], took)
        if took >= LONG:
            self.long.append((round(now - self.started, 3), generation, round(took, 4), info["collected"]))

    def summary(self) -> dict[str, object]:
        return {
            "seconds": round(time.perf_counter() - self.started, 1),
            "thresholds": gc.get_threshold(),
            "tracked_objects": len(gc.get_objects()),
            "frozen_objects": gc.get_freeze_count(),
            "generations": [
                {
                    "generation": generation,
                    "collections": self.count[generation],
                    "total_s": round(self.total[generation], 4),
                    "longest_ms": round(self.longest[generation] * 1000, 2),
                    "mean_ms": round(self.total[generation] / max(1, self.count[generation]) * 1000, 3),
                    "cpu_longest_ms": round(self.cpu_longest[generation] * 1000, 2),
                    "cpu_mean_ms": round(
                        self.cpu_total[generation] / max(1, self.count[generation]) * 1000, 3
                    ),
                }
                for generation in range(3)
            ],
            "long_pauses": self.long[-200:],
        }


def main() -> None:
    """``gc_trace OUTPUT -- -m MODULE ARGS...``."""
    if len(sys.argv) < 5 or sys.argv[2] != "--" or sys.argv[3] != "-m":
        raise SystemExit("usage: python -m kutnahora.bench.gc_trace OUTPUT.json -- -m MODULE [ARGS...]")
    output, module, arguments = Path(sys.argv[1]), sys.argv[4], sys.argv[5:]
    pauses = Pauses()
    gc.callbacks.append(pauses.callback)
    atexit.register(lambda: output.write_text(json.dumps(pauses.summary(), indent=1) + "\n"))
    sys.argv = [module, *arguments]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
