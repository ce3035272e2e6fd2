"""docs/envs.md says what the code does: the normalisation scales, and the training run's real figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kutnahora.learned.encoding import COUNTER_SCALES, COUNTERS, SCALES, SEAT_COUNTERS, SEAT_SCALES, SIGNED

DOCS = Path(__file__).resolve().parents[2] / "docs"
TEXT = (DOCS / "envs.md").read_text()


def table() -> dict[tuple[str, str], int]:
    """(section, entry) → divisor, from the scale table's rows."""
    rows: dict[tuple[str, str], int] = {}
    for section, entries, divisor in re.findall(r"^\| (counters|seat \+k) \| ([^|]+) \| (\d+)", TEXT, re.M):
        for entry in entries.split(", "):
            rows[(section, re.sub(r" \((signed|per \w+)\)", "", entry.strip()))] = int(divisor)
    for section, entries, divisor in re.findall(
        r"^\| (market|town_hall|patricians) \| ([^|]+) \| (\d+)", TEXT, re.M
    ):
        rows[(section, entries.strip())] = int(divisor)
    return rows


def test_the_scale_table_lists_every_counter_and_seat_number_with_its_divisor() -> None:
    rows = table()
    for name, scale in zip(COUNTERS, COUNTER_SCALES, strict=True):
        assert rows[("counters", name)] == scale, name
    for name, scale in zip(SEAT_COUNTERS[1:], SEAT_SCALES[1:], strict=True):
        assert rows[("seat +k", name)] == scale, name
    assert rows[("seat +k", "production")] == SCALES["seat production"]
    assert rows[("seat +k", "houses removed")] == SCALES["seat houses removed"]
    assert rows[("market", "deck positions")] == SCALES["market.decks"]
    assert rows[("market", "arm notches")] == SCALES["market.arms"]
    assert rows[("market", "prices")] == SCALES["market.prices"]
    assert rows[("town_hall", "a stack's size")] == SCALES["town_hall (stack size)"]
    assert rows[("patricians", "bank, pool, council")] == SCALES["patricians (bank, pool, council)"]
    for name in SIGNED:
        assert re.search(rf"^\| seat \+k \| {name} \(signed\)", TEXT, re.M)


def test_the_training_figures_quoted_are_those_of_the_recorded_run() -> None:
    results = json.loads((DOCS / "envs-learning-results.json").read_text())
    png = DOCS / "envs-learning-curve.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![MaskablePPO learning curve](envs-learning-curve.png)" in TEXT
    for evaluation in results["evaluations"]:
        low, high = evaluation["wilson95"]
        stage, opponent = evaluation["stage"], evaluation["opponent"]
        won = f"{evaluation['wins']}/{evaluation['games']}"
        quoted = f"| {stage} | {opponent} | {won} | {evaluation['ties']} | {low:.0%}–{high:.0%} |"
        assert quoted in TEXT
    assert f"{results['timesteps']['random']:,} steps against random" in TEXT
    assert f"{results['timesteps']['greedy']:,} against greedy" in TEXT
