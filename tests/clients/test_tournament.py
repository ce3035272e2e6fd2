"""The tournament runner: fair schedules, statistics, and whole runs of ``kutnahora-tournament``."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from kutnahora.clients.tournament.results import Failure, GameRecord
from kutnahora.clients.tournament.schedule import derive_seed, lineups, schedule, seatings
from kutnahora.clients.tournament.stats import placements, standings, wilson
from tests.clients.helpers import ROOT, python_module, run_module

TOURNAMENT = "kutnahora.clients.tournament.cli"


def test_two_bots_on_four_seats_play_two_copies_each_and_every_seat_equally() -> None:
    games = schedule(["random", "greedy"], players=4, games=12, seed=1)
    assert {tuple(sorted(g.bots)) for g in games} == {("greedy", "greedy", "random", "random")}
    for seat in range(4):
        assert Counter(g.bots[seat] for g in games) == {"greedy": 6, "random": 6}
    # Every group of rotations is complete after 4 + 2 games, so every prefix of 6 is balanced too.
    for seat in range(4):
        assert Counter(g.bots[seat] for g in games[:6]) == {"greedy": 3, "random": 3}


def test_three_bots_on_four_seats_rotate_the_extra_copy() -> None:
    assert lineups(["a", "b", "c"], 4) == [("a", "a", "b", "c"), ("a", "b", "b", "c"), ("a", "b", "c", "c")]
    games = schedule(["a", "b", "c"], players=4, games=36, seed=1)
    appearances = Counter(bot for g in games for bot in g.bots)
    assert appearances == {"a": 48, "b": 48, "c": 48}


def test_more_bots_than_seats_is_a_round_robin() -> None:
    assert lineups(["a", "b", "c", "d", "e"], 4) == [
        ("a", "b", "c", "d"),
        ("a", "b", "c", "e"),
        ("a", "b", "d", "e"),
        ("a", "c", "d", "e"),
        ("b", "c", "d", "e"),
    ]
    assert len(seatings(("a", "b", "c", "d"))) == 24
    games = schedule(["a", "b", "c", "d", "e"], players=4, games=5 * 24, seed=1)
    for seat in range(4):
        assert Counter(g.bots[seat] for g in games) == {b: 24 for b in "abcde"}


def test_seeds_are_stable_distinct_and_depend_on_the_tournament_seed() -> None:
    first = schedule(["random", "greedy"], 4, 50, seed=7)
    assert first == schedule(["random", "greedy"], 4, 50, seed=7)
    assert len({g.seed for g in first}) == 50
    assert all(0 <= g.seed < 2**63 for g in first)
    assert [g.seed for g in first] != [g.seed for g in schedule(["random", "greedy"], 4, 50, seed=8)]
    assert derive_seed("x", 1) == derive_seed("x", 1) != derive_seed("x", 2)
    assert first[0].bot_seed(0) != first[0].bot_seed(1)


def test_a_bot_named_twice_or_a_bad_count_is_refused() -> None:
    with pytest.raises(ValueError, match="once"):
        schedule(["greedy", "greedy"], 4, 10, 1)
    with pytest.raises(ValueError):
        schedule(["greedy"], 5, 10, 1)


def test_wilson_interval() -> None:
    low, high = wilson(160, 200)
    assert low == pytest.approx(0.7394, abs=1e-3)
    assert high == pytest.approx(0.8505, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(12, 12)
    assert high == 1.0 and low == pytest.approx(0.7575, abs=1e-3)


def test_a_failed_seat_loses_and_the_others_keep_their_result() -> None:
    crashed = GameRecord(
        index=0,
        game_id="g0",
        seed=1,
        bots=["crash", "random"],
        scores=[40, 10],
        winners=[1],
        status="error",
        replay=None,
        failures=[Failure(0, "crash", "error", "exited with status 3")],
        groschen=[0, 0],
    )
    clean = GameRecord(1, "g1", 2, ["random", "crash"], [5, 9], [1], "finished", None, [], [0, 0])
    assert placements(crashed) == [2, 1]
    table = {s.bot: s for s in standings(["crash", "random"], [crashed, clean])}
    assert (table["crash"].games, table["crash"].wins, table["crash"].failures) == (2, 1, 1)
    assert (table["random"].games, table["random"].wins) == (2, 1)
    assert table["crash"].mean_score == 9  # the crashed seat's score is left out
    assert table["random"].mean_score == 7.5


def test_a_tournament_runs_reports_and_reruns_identically(tmp_path: Path) -> None:
    out, table = tmp_path / "results.json", tmp_path / "table.csv"
    args = ["--bots", "random,greedy", "--players", "2", "--games", "6", "--seed", "3", "--concurrency", "3"]
    done = run_module(TOURNAMENT, *args, "--out", str(out), "--csv", str(table))
    assert done.returncode == 0, done.stderr
    assert "Started a local server at 127.0.0.1:" in done.stderr
    assert "greedy" in done.stdout and "Rating" in done.stdout and "6 games (6 finished)" in done.stdout

    results = json.loads(out.read_text())
    games = results["games"]
    assert [g["index"] for g in games] == list(range(6))
    for game in games:
        assert {"game_id", "seed", "bots", "scores", "winners", "status", "replay"} <= set(game)
        assert game["status"] == "finished" and len(game["scores"]) == 2 and game["winners"]
        assert Path(game["replay"]).exists()
        replay = json.loads(Path(game["replay"]).read_text())
        assert replay["game"]["gameId"] == game["game_id"] and replay["decisions"]
    assert Counter(g["bots"][0] for g in games) == {"random": 3, "greedy": 3}
    by_bot = {s["bot"]: s for s in results["standings"]}
    assert by_bot["greedy"]["games"] == 6 and by_bot["greedy"]["wins"] >= 4
    assert by_bot["greedy"]["rating"] > by_bot["random"]["rating"]

    with table.open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["bot"] for r in rows} == {"greedy", "random"}
    assert set(rows[0]) >= {"games", "wins", "win_rate", "win_rate_ci95_low", "mean_score", "rating"}

    # The same command plays the same games: the same seeds give the same scores.
    again = tmp_path / "again.json"
    rerun = run_module(TOURNAMENT, *args, "--out", str(again), "--no-replays")
    assert rerun.returncode == 0, rerun.stderr
    second = json.loads(again.read_text())["games"]
    assert [(g["seed"], g["bots"], g["scores"]) for g in second] == [
        (g["seed"], g["bots"], g["scores"]) for g in games
    ]

    # Resuming a run that stopped half-way plays only the missing games.
    results["games"] = games[:3]
    out.write_text(json.dumps(results))
    resumed = run_module(TOURNAMENT, *args, "--out", str(out), "--resume", "--no-replays")
    assert resumed.returncode == 0, resumed.stderr
    finished = json.loads(out.read_text())["games"]
    assert [g["game_id"] for g in finished[:3]] == [g["game_id"] for g in games[:3]]
    assert [g["scores"] for g in finished] == [g["scores"] for g in games]

    refused = run_module(
        TOURNAMENT, "--bots", "random,greedy", "--players", "2", "--games", "7", "--out", str(out), "--resume"
    )
    assert refused.returncode == 2 and "not 7" in refused.stderr


def test_crashing_and_hanging_bots_lose_only_their_games(tmp_path: Path, server_address: str) -> None:
    out = tmp_path / "results.json"
    done = run_module(
        TOURNAMENT,
        "--bots",
        "random",
        "--bot-cmd",
        "crash=python -c 'import sys; print(\"boom\", file=sys.stderr); sys.exit(3)'",
        "--bot-cmd",
        "hang=sleep 30",
        "--players",
        "3",
        "--games",
        "3",
        "--move-timeout",
        "2",
        "--server",
        server_address,
        "--out",
        str(out),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    games = json.loads(out.read_text())["games"]
    assert len(games) == 3
    for game in games:
        failed = {f["bot"]: f for f in game["failures"]}
        assert failed["crash"]["status"] == "error" and "status 3: boom" in failed["crash"]["reason"]
        assert failed["hang"]["status"] == "timeout"
        assert game["status"] == "error"
        assert game["scores"] is not None  # the server's random policy finished the game
        assert [game["bots"][w] for w in game["winners"]] == ["random"]
    standings_by_bot = {s["bot"]: s for s in json.loads(out.read_text())["standings"]}
    assert standings_by_bot["random"]["wins"] == 3
    assert standings_by_bot["crash"]["failures"] == 3 and standings_by_bot["crash"]["wins"] == 0


def test_an_external_bot_command_plays_its_seats(tmp_path: Path, server_address: str) -> None:
    out = tmp_path / "results.json"
    done = run_module(
        TOURNAMENT,
        "--bots",
        "random",
        "--bot-cmd",
        "greedy-cli=python -m kutnahora.clients.bots.cli greedy --quiet",
        "--players",
        "2",
        "--games",
        "2",
        "--server",
        server_address,
        "--out",
        str(out),
        "--no-replays",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    games = json.loads(out.read_text())["games"]
    assert [g["status"] for g in games] == ["finished", "finished"]
    assert all(g["replay"].startswith("kutnahora://") for g in games)


def test_usage_errors_and_an_unreachable_server_exit_2() -> None:
    unknown = run_module(TOURNAMENT, "--bots", "random,nobody", "--games", "1")
    assert unknown.returncode == 2 and "unknown bot 'nobody'" in unknown.stderr
    bad_cmd = run_module(TOURNAMENT, "--bots", "random", "--bot-cmd", "oops")
    assert bad_cmd.returncode == 2 and "NAME=COMMAND" in bad_cmd.stderr
    away = run_module(TOURNAMENT, "--bots", "random,greedy", "--games", "1", "--server", "127.0.0.1:1")
    assert away.returncode == 2
    assert away.stderr.strip().count("\n") == 0 and "cannot connect" in away.stderr
    helped = run_module(TOURNAMENT, "--help")
    assert helped.returncode == 0 and "--bot-cmd" in helped.stdout and "--resume" in helped.stdout


def test_the_local_server_plays_the_component_set_given(tmp_path: Path) -> None:
    """--components FILE starts the runner's own server with that set: every saved replay names its hash."""
    from importlib import resources

    from kutnahora import engine

    raw = json.loads(resources.files("kutnahora.engine").joinpath("data/components.json").read_text())
    raw["buildings"][0]["name"] = "Printed Smelting Works"
    components = tmp_path / "printed.json"
    components.write_text(json.dumps(raw))
    digest = engine.components_hash(engine.load_components(components))
    out = tmp_path / "results.json"
    args = ("--bots", "random", "--players", "2", "--games", "2", "--seed", "3", "--quiet")
    done = run_module(TOURNAMENT, *args, "--components", str(components), "--out", str(out))
    assert done.returncode == 0, done.stderr
    replays = sorted((tmp_path / "results.replays").glob("*.json"))
    assert len(replays) == 2
    assert all(json.loads(path.read_text())["game"]["componentsHash"] == digest for path in replays)
    refused = run_module(TOURNAMENT, *args, "--components", str(components), "--server", "127.0.0.1:1")
    assert refused.returncode == 2 and "--components sets up the local server" in refused.stderr


def test_the_table_is_not_cut_at_80_columns_into_a_pipe(server_address: str) -> None:
    done = run_module(
        TOURNAMENT,
        *("--bots", "random,greedy,a-bot-with-a-rather-long-name", "--players", "2", "--games", "3"),
        *("--bot-cmd", "a-bot-with-a-rather-long-name=exit 3", "--server", server_address, "--quiet"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    header = next(line for line in done.stdout.splitlines() if "Bot" in line and "Games" in line)
    assert "Rating" in header and "Failed" in header, done.stdout
    assert "a-bot-with-a-rather-long-name" in done.stdout and "…" not in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) > 80


def test_the_server_token_lets_a_tournament_hold_more_games_than_one_callers_quota(tmp_path: Path) -> None:
    """Against a server that lets one caller hold one unfinished game, a tournament playing three at once
    is refused games (recorded as errors), unless it sends the server's --quota-token (--server-token)."""
    server = subprocess.Popen(
        python_module(
            "kutnahora.server.main",
            *("--port", "0", "--db", ":memory:", "--metrics-port", "off", "--log-level", "warning"),
            *("--caller-games", "1", "--quota-exempt", "none"),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env={**os.environ, "KUTNAHORA_QUOTA_TOKEN": "tournament-quota-token"},
    )
    assert server.stdout is not None
    found = re.search(r"listening on grpc://(\S+)", server.stdout.readline())
    assert found is not None
    try:
        for token, expected in (("tournament-quota-token", {"finished"}), ("", {"finished", "error"})):
            out = tmp_path / f"results-{bool(token)}.json"
            done = run_module(
                TOURNAMENT,
                *("--bots", "random,greedy", "--games", "3", "--concurrency", "3", "--no-replays"),
                *("--server", found.group(1), "--out", str(out), "--quiet"),
                timeout=120,
                env={"KUTNAHORA_SERVER_TOKEN": token},
            )
            games = json.loads(out.read_text())["games"]
            assert {g["status"] for g in games} == expected, done.stdout + done.stderr
            if not token:
                refused = [g for g in games if g["status"] == "error"]
                assert all("already holds 1 unfinished games" in json.dumps(g) for g in refused)
    finally:
        server.terminate()
        server.wait(10)
