"""``python -m kutnahora.bench.game_lifecycle``: a game's life outside its decisions, on a real server."""

from __future__ import annotations

import re
import subprocess
import sys

from kutnahora.bench import game_lifecycle


def test_every_way_of_starting_a_game_is_measured_on_a_real_server() -> None:
    figures = game_lifecycle.measure(games=48, repeats=1)
    assert set(figures) == {"seated", "joined", "streams"}
    assert all(len(values) == 1 for values in figures.values())
    # a JoinGame call per seat, or a Play stream per seat, costs the server more than naming the seats
    assert 0 < figures["seated"][0] < figures["joined"][0]
    assert figures["seated"][0] < figures["streams"][0]


def test_the_summary_derives_one_join_and_one_stream_from_the_medians() -> None:
    figures = {"seated": [1000.0, 1200.0], "joined": [3100.0, 3300.0], "streams": [4000.0, 4200.0]}
    text = game_lifecycle.summary(figures, games=3)  # 2, 3 and 4 seats: 3 a game
    assert "seated 1100 µs, joined 3200 µs, with a Play stream per seat 4100 µs (3.0 seats a game)" in text
    assert "one JoinGame costs about 700 µs" in text
    assert "one Play stream (opened, its turn or none, its GameEnded, closed) about 1000 µs" in text


def test_the_command_prints_each_repeat_and_refuses_nonsense() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.game_lifecycle", "--games", "6", "--repeats", "2"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    repeats = re.findall(r"^repeat \d: seated \d+ µs, joined \d+ µs, streams \d+ µs", done.stdout, re.M)
    assert len(repeats) == 2
    assert re.search(r"^so one JoinGame costs about -?\d+ µs", done.stdout, re.M)
    refused = subprocess.run(
        [sys.executable, "-m", "kutnahora.bench.game_lifecycle", "--games", "0"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and "must be positive" in refused.stderr
