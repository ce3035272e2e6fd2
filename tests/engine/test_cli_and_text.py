"""The simulator command and the text forms of options (STYLE · canonical text forms)."""

from __future__ import annotations

import json
import random
import sys

import pytest

from kutnahora.engine import GameOptions, apply, legal, new_game, option_text, parse_option
from kutnahora.engine import components as components_module
from kutnahora.engine import options as options_module
from kutnahora.engine.options import DecisionKind, PlayCard, Skip
from kutnahora.engine.text import QUESTIONS, describe_option
from kutnahora.native.sim import main

NAMESPACE = {**vars(options_module), **vars(components_module)}


def test_sim_json_reports_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    """``kutnahora-sim --json`` prints one object with the documented fields and finishes every game."""
    assert main(["--players", "3", "--games", "4", "--seed", "9", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("games", "finished", "errors", "decisions", "games_per_second", "decisions_per_second"):
        assert key in report
    assert report["games"] == report["finished"] == 4
    assert report["errors"] == 0
    assert report["decisions"] > 4 * 6 * 3 * 5  # at least every card of every round


def test_sim_json_reports_the_cpu_time_used(capsys: pytest.CaptureFixture[str]) -> None:
    """On a shared machine the CPU time is what one core did: reported with the games per CPU second."""
    assert main(["--players", "2", "--games", "3", "--seed", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cpu_seconds"] > 0
    assert report["games_per_cpu_second"] == pytest.approx(3 / report["cpu_seconds"], rel=0.01)


def test_sim_summary_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    """Without ``--json`` the summary says how many games finished; off a terminal, nothing else."""
    assert main(["--players", "2", "--games", "2"]) == 0
    printed = capsys.readouterr()
    assert "2/2 games of 2 players finished, 0 errors" in printed.out
    assert printed.err == ""


def test_sim_shows_its_progress_on_a_terminal() -> None:
    """A long run on a terminal says how many games are done while it plays, then clears that line."""
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "kutnahora.native.sim", "--players", "4", "--games", "60"],
        encoding="utf-8",
        timeout=120,
    )
    child.expect(r"kutnahora-sim: \d+/60 games…")
    child.expect("60/60 games of 4 players finished, 0 errors")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_sim_refuses_a_broken_component_file(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    """A component file that fails validation is reported in one line, exit status 2."""
    from pathlib import Path

    bad = Path(str(tmp_path)) / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["--components", str(bad), "--games", "1"]) == 2
    assert f"kutnahora-sim: {bad} is not a valid component file: format_version" in capsys.readouterr().err
    missing = Path(str(tmp_path)) / "missing.json"
    assert main(["--components", str(missing), "--games", "1"]) == 2
    assert f"kutnahora-sim: cannot read {missing}: No such file or directory" in capsys.readouterr().err


def test_sim_refuses_zero_games(capsys: pytest.CaptureFixture[str]) -> None:
    """Nonsense arguments are refused with a sentence."""
    assert main(["--games", "0"]) == 2
    assert "--games must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_option_met_round_trips_and_reads_well(players: int) -> None:
    """Every option has a canonical text that parses back to it, and a readable description."""
    state = new_game(GameOptions(players=players), 21)
    chooser = random.Random(21)
    kinds: set[DecisionKind] = set()
    while not state.over:
        decision = state.pending
        assert decision is not None
        kinds.add(decision.kind)
        assert QUESTIONS[decision.kind]
        for option in decision.options:
            assert parse_option(option_text(option)) == option
            assert eval(repr(option), NAMESPACE) == option
            text = describe_option(state, decision.kind, option)
            assert text and text[0].isupper()
        options = legal(state)
        apply(state, options[chooser.randrange(len(options))])
    assert DecisionKind.PLAY_CARD in kinds and DecisionKind.TAX in kinds


@pytest.mark.parametrize("text", ["", "play", "play x mine", "square 1", "rows a,b,c", "fly away"])
def test_parse_option_refuses_nonsense(text: str) -> None:
    """A text that is no option is refused with a ValueError naming it."""
    with pytest.raises(ValueError):
        parse_option(text)


def test_option_texts() -> None:
    """A few canonical forms, as documented in docs/engine.md."""
    assert option_text(PlayCard(2, None)) == "play 2 none"
    assert parse_option("play 2 mine") == PlayCard(2, parse_option("play 2 mine").action)  # type: ignore[union-attr]
    assert option_text(Skip()) == "skip"


def test_event_texts_are_correct_english() -> None:
    """Event sentences count in the right number and use the right article: "1 miner", "1 mine tile",
    "an innkeepers house", "1 point", "St. Barbara" (regression: "1 miners", "a innkeepers house")."""
    from kutnahora.engine.components import Guild
    from tests.engine.conftest import claim, give_rights, named, play, repose, set_guilds, started

    state = started(4, mine_setup_card=1)
    texts = [e.text for e in play(state, "play 2 mine", "yes")]
    assert "seat 0 moves 1 miner into the pool" in texts
    assert "seat 0 draws 1 mine tile" in texts
    texts = [e.text for e in play(state, "skip")]
    assert "seat 0 discards 1 mine tile" in texts

    state = started(4)
    set_guilds(state, 0, Guild.GROCERS, Guild.INNKEEPERS, Guild.SCRIBES)
    butchers = named("Butchers' Shambles")  # grocers: arm, remove a house
    give_rights(state, 0, butchers)
    claim(state, 0, (2, 2))
    state.players[0].pelicans = 1
    repose(state)
    texts = [
        e.text for e in play(state, "play 3 building", f"tile {butchers}", "square 2,2", "guild innkeepers")
    ]
    assert "seat 0 removes an innkeepers house" in texts
    assert any(t.startswith("seat 0 places a grocers house; its space shows ") for t in texts)
    texts = [e.text for e in play(state, "play 6 st_barbara")]
    assert "seat 0 plays card 6 for St. Barbara" in texts


def test_a_card_half_not_offered_says_why() -> None:
    """docs/rules.md#r4: an action that could have no effect is offered only for no effect; the seat is
    told why (003 · The St. Barbara action needs a pelican; 001 · Running out of pieces: no plot marker
    left)."""
    from kutnahora.engine.components import Action
    from kutnahora.engine.text import unavailable_actions
    from tests.engine.conftest import claim, repose, started

    state = started(4)
    assert (6, Action.ST_BARBARA, "you have no pelican token") in unavailable_actions(state)
    claim(state, 0, (0, 0), (0, 1), (0, 2))
    repose(state)
    missing = unavailable_actions(state)
    assert (2, Action.PLOT, "all your plot markers are in town") in missing
    assert (3, Action.PLOT, "all your plot markers are in town") in missing
    state.players[0].pelicans = 1
    repose(state)
    assert not [m for m in unavailable_actions(state) if m[1] is Action.ST_BARBARA]
