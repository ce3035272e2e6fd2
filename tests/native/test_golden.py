"""The engine's golden playthroughs (tests/engine/golden) replayed by the native core.

Every decision line (its version, round, seat, kind, number of options and the option chosen), the
results and the final state hash must read as in the golden files; the event lines are the engine's alone
(the core's ``apply`` returns no events) and are left out of the comparison.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kutnahora.engine import RULES_VERSION, GameOptions, option_text
from kutnahora.native import native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="the native core is not built")

GOLDEN = Path(__file__).resolve().parent.parent / "engine" / "golden"
SEEDS = {2: 2024, 3: 1308, 4: 1388}


def render_without_events(players: int, seed: int) -> str:
    """The golden file's lines, played by the core, without the events."""
    from kutnahora.native.game import NativeGame

    game = NativeGame.new(GameOptions(players=players), seed)
    state = game.to_state()
    chooser = random.Random(seed)
    lines = [
        f"# Kutná Hora playthrough: {players} players, seed {seed}, rules version {RULES_VERSION}",
        f"setup: guild setup card {state.guild_setup_card}, mine setup card {state.mine_setup_card}",
    ]
    while not game.over:
        options = game.legal()
        option = options[chooser.randrange(len(options))]
        lines.append(
            f"v{game.version} r{game.to_state().round} seat {game.seat} {game.kind()} "
            f"({len(options)} options): {option_text(option)}"
        )
        game.apply(option)
    outcome = game.result()
    assert outcome is not None
    lines.append(f"scores: {list(outcome.scores)}  groschen: {list(outcome.groschen)}")
    lines.append(f"winners: {list(outcome.winners)}")
    for seat, parts in enumerate(outcome.breakdown):
        lines.append(f"seat {seat}: " + ", ".join(f"{k} {v}" for k, v in parts.items()))
    lines.append(f"state hash: {game.state_hash()}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("players", sorted(SEEDS))
def test_the_core_plays_the_golden_playthrough(players: int) -> None:
    golden = (GOLDEN / f"playthrough_{players}p.txt").read_text(encoding="utf-8")
    expected = "".join(line for line in golden.splitlines(keepends=True) if not line.startswith("    "))
    assert render_without_events(players, SEEDS[players]) == expected
