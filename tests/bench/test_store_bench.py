"""``python -m kutnahora.bench.store_bench`` measures the SQLite store's appends committed together and
one by one, in the same run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kutnahora.bench import store_bench


def test_the_decisions_of_one_turn_share_a_commit_and_one_by_one_each_has_its_own(tmp_path: Path) -> None:
    found = store_bench.run(games=8, moving=4, decisions=20, repeats=1)
    together, alone = found
    assert together.grouped and not alone.grouped
    assert together.per_commit == pytest.approx(4.0)  # 8 games, every second one moving in each turn
    assert alone.per_commit == 1.0
    assert together.cpu_us > 0 and alone.cpu_us > 0
    result = store_bench.summary(found)
    assert result["ratio"] == together.cpu_us / alone.cpu_us


def test_the_command_prints_medians_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "store.json"
    command = [sys.executable, "-m", "kutnahora.bench.store_bench", "--games", "4", "--moving", "4"]
    done = subprocess.run(
        [*command, "--decisions", "10", "--repeats", "2", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "medians of 2: together" in done.stdout
    assert "repeat 2 of 2" in done.stderr, "no progress was shown"
    written = json.loads(out.read_text())
    assert len(written["runs"]) == 4
    assert written["together_per_commit"] == 4.0 and written["one_by_one_per_commit"] == 1.0
    refused = subprocess.run([*command, "--repeats", "0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--repeats must be at least 1" in refused.stderr
