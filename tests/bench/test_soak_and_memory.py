"""``kutnahora-soak`` and the memory-per-game measurement run end to end and print their figures."""

from __future__ import annotations

import re
import subprocess
import sys

from kutnahora.bench import game_memory


def test_the_soak_prints_the_servers_memory_over_time() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.soak",
            "--sequences", "120", "--concurrency", "4", "--report-every", "0.5",
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "120 hostile Play sequences" in done.stdout
    samples = re.findall(r"(\d+) sequences, server RSS ([\d.]+) MiB", done.stdout)
    assert len(samples) >= 2 and int(samples[-1][0]) == 120
    assert re.search(r"growth +-?\d+ bytes per sequence in the first half, -?\d+ in the second", done.stdout)


def test_memory_per_loaded_game_is_measured_and_placed() -> None:
    result = game_memory.measure(games=3, decisions=40)
    assert result.games == 3 and result.decisions_per_game == 40
    assert result.bytes_per_game > 0
    assert "engine" in result.by_place and any(place.startswith("server/") for place in result.by_place)


def test_memory_of_games_loaded_from_the_store_is_measured_and_holds_their_history() -> None:
    result = game_memory.measure(games=3, decisions=40, reloaded=True)
    assert result.games == 3 and result.decisions_per_game == 40
    assert "server/history.py" in result.by_place and "engine" in result.by_place
    assert result.bytes_per_game > 0
