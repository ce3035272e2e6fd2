"""Golden playthroughs: one seeded game per player count, every decision and event, diffed in a test.

A change in behaviour shows up as a readable diff of these files. When the change is intended, rewrite
them with ``KUTNAHORA_UPDATE_GOLDEN=1 pytest tests/engine/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import difflib
import os
import random
from pathlib import Path

import pytest

from kutnahora.engine import (
    RULES_VERSION,
    GameOptions,
    apply,
    legal,
    new_game,
    option_text,
    result,
    state_hash,
)

GOLDEN = Path(__file__).parent / "golden"
SEEDS = {2: 2024, 3: 1308, 4: 1388}


def render_playthrough(players: int, seed: int) -> str:
    """Play one game with a seeded random chooser and write down everything that happened."""
    state = new_game(GameOptions(players=players), seed)
    chooser = random.Random(seed)
    lines = [
        f"# Kutná Hora playthrough: {players} players, seed {seed}, rules version {RULES_VERSION}",
        f"setup: guild setup card {state.guild_setup_card}, mine setup card {state.mine_setup_card}",
    ]
    while not state.over:
        decision = state.pending
        assert decision is not None
        options = legal(state)
        option = options[chooser.randrange(len(options))]
        lines.append(
            f"v{state.version} r{state.round} seat {decision.seat} {decision.kind} "
            f"({len(options)} options): {option_text(option)}"
        )
        lines.extend(f"    {event.text}" for event in apply(state, option))
    outcome = result(state)
    assert outcome is not None
    lines.append(f"scores: {list(outcome.scores)}  groschen: {list(outcome.groschen)}")
    lines.append(f"winners: {list(outcome.winners)}")
    for seat, parts in enumerate(outcome.breakdown):
        lines.append(f"seat {seat}: " + ", ".join(f"{k} {v}" for k, v in parts.items()))
    lines.append(f"state hash: {state_hash(state)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("players", sorted(SEEDS))
def test_playthrough_matches_golden_file(players: int) -> None:
    """The seeded game plays out exactly as recorded."""
    path = GOLDEN / f"playthrough_{players}p.txt"
    actual = render_playthrough(players, SEEDS[players])
    if os.environ.get("KUTNAHORA_UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), actual.splitlines(True), str(path), "this run", n=2
            )
        )
        pytest.fail(f"the {players}-player playthrough changed:\n{diff[:6000]}")
