"""Report windows measured by several client processes, merged into one line each
(:mod:`kutnahora.bench.windows`); the collector trace (:mod:`kutnahora.bench.gc_trace`)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

from kutnahora.bench.windows import Merger, Window, merge, quantile, schedule, spread


def test_windows_end_every_interval_and_the_last_at_the_end_of_the_duration() -> None:
    assert schedule(120, 30) == [30, 60, 90, 120]
    assert schedule(100, 30) == [30, 60, 90, 100]
    assert schedule(5, 30) == [5]


def test_quantiles_are_nearest_rank_and_pooled_before_they_are_taken() -> None:
    values = [float(n) for n in range(1, 1001)]
    assert quantile(values, 0.5) == 500 and quantile(values, 0.99) == 990 and quantile(values, 0.999) == 999
    assert math.isnan(quantile([], 0.5))
    # One process saw fast answers, the other slow ones: the merged p99 is the slow process's, not a mean.
    fast = Window(1, 30.0, 900, [0.001] * 900, {"finished": 2, "games_refused:OVERLOADED": 1})
    slow = Window(1, 30.2, 100, [0.5] * 100, {"finished": 1})
    merged = merge([fast, slow])
    assert merged.decisions == 1000 and merged.seconds == 30.2
    assert merged.counters == {"finished": 3, "games_refused:OVERLOADED": 1}
    figures = spread(merged.latencies)
    assert figures["p50"] == 1.0 and figures["p99"] == 500.0 and figures["max"] == 500.0
    assert Window.from_json(json.loads(json.dumps(fast.to_json()))) == fast


def test_a_window_is_reported_once_every_running_source_gave_it() -> None:
    reported: list[tuple[int, list[str]]] = []
    merger = Merger(["a", "b", "probe"], lambda number, got: reported.append((number, sorted(got))))
    merger.add("a", Window(1, 1.0))
    merger.add("a", Window(2, 1.0))
    merger.add("probe", Window(1, 1.0))
    assert reported == []  # b has not given window 1 yet
    merger.add("b", Window(1, 1.0))
    assert reported == [(1, ["a", "b", "probe"])]
    merger.finish("b")  # b ended (or failed): window 2 no longer waits for it, but still for the probe
    assert reported == [(1, ["a", "b", "probe"])]
    merger.add("probe", Window(2, 1.0))
    assert reported[-1] == (2, ["a", "probe"])
    merger.add("a", Window(3, 1.0))
    merger.finish("probe")
    merger.finish("a")  # nothing runs any more: what is left is reported
    assert reported[-1] == (3, ["a"])


def test_the_collector_trace_times_every_collection_of_the_module_it_runs(tmp_path: Path) -> None:
    output = tmp_path / "pauses.json"
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.gc_trace", str(output), "--", "-m", "timeit", "-n", "3",
            "-r", "1", "import gc; gc.collect(); gc.collect(0)",
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "loop" in done.stdout  # timeit ran and printed its line
    summary = json.loads(output.read_text())
    by_generation = {entry["generation"]: entry for entry in summary["generations"]}
    assert by_generation[2]["collections"] >= 3 and by_generation[0]["collections"] >= 3
    assert by_generation[2]["longest_ms"] > 0 and by_generation[2]["total_s"] > 0
    assert 0 < by_generation[2]["cpu_longest_ms"] <= by_generation[2]["longest_ms"] * 1.1 + 1
    wrong = subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.gc_trace", str(output)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert wrong.returncode != 0 and "usage" in wrong.stderr


def test_the_store_write_benchmark_tells_checkpoints_from_plain_writes(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.sqlite_writes", "--games", "10", "--decisions", "3000",
            "--checkpoint-every", "100", "--folder", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    own = done.stdout.split("checkpoints also on the worker")[0]
    # 3,000 decisions fill SQLite's 1,000-page log a few times: some writes ran a checkpoint.
    found = re.search(r"checkpoint +(\d+) writes.*\n +plain +(\d+) writes", own)
    assert found is not None, done.stdout
    assert int(found.group(1)) >= 1 and int(found.group(1)) + int(found.group(2)) == 3000
    assert "checkpoints also on the worker every 100 writes" in done.stdout
