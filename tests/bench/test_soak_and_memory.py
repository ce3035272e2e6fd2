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


def test_play_streams_the_server_ends_by_itself_do_not_keep_what_the_client_sends_next() -> None:
    """A start on an ended game, then a decision of 100 KB: the server ends the stream by itself while the
    client is still sending. Each such stream once kept that last message for as long as the server ran
    (about 90 KB a stream: 1,500 streams took the server from 67 to 200 MiB); now its memory levels off."""
    done = subprocess.run(
        [
            sys.executable, "-m", "kutnahora.bench.soak", "--kinds", "ended_game",
            "--sequences", "1500", "--concurrency", "16", "--report-every", "1",
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    found = re.search(r"server RSS +([\d.]+) MiB at the start, ([\d.]+) MiB at the end", done.stdout)
    assert found is not None, done.stdout
    start, end = float(found.group(1)), float(found.group(2))
    assert end - start < 40, f"the server's RSS grew from {start} to {end} MiB over 1,500 streams"


def test_the_soak_refuses_an_unknown_kind() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.soak", "--kinds", "ended_game,nonsense"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0 and "unknown kind nonsense" in done.stderr
