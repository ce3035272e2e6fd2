"""Your own component data through the service: ``--components``, GetComponents, the hash every game
records (summary, replay, store), and the refusal of a server that does not hold a game's set."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from importlib import resources
from pathlib import Path

import grpc
import pytest

from kutnahora import engine
from kutnahora.server.main import build_parser, config_from_args
from kutnahora.v1 import game_service_pb2, play_service_pb2, replay_service_pb2
from tests.server.conftest import StartServer, bearer, play_game


def printed_set(tmp_path: Path) -> tuple[Path, engine.ComponentSet]:
    """A component file with one printed value changed, as an owner of the game would write it."""
    raw = json.loads(resources.files("kutnahora.engine").joinpath("data/components.json").read_text())
    raw["name"] = "My printed set"
    raw["buildings"][0]["name"] = "Printed Smelting Works"
    raw["default_plot_cost"] = 4
    path = tmp_path / "printed.json"
    path.write_text(json.dumps(raw))
    return path, engine.load_components(path)


async def test_the_server_plays_and_serves_the_set_it_was_given(
    tmp_path: Path, start_server: StartServer
) -> None:
    _, printed = printed_set(tmp_path)
    digest = engine.components_hash(printed)
    assert digest != engine.components_hash(engine.default_components())
    db = str(tmp_path / "games.db")
    _, client = await start_server(db=db, components=printed)

    components = await client.games.GetComponents(game_service_pb2.GetComponentsRequest())
    assert components.components.name == "My printed set"
    assert components.components.buildings[0].name == "Printed Smelting Works"
    assert components.components.default_plot_cost == 4
    assert components.components_hash == digest

    game_id, tokens, _ = await client.new_game(players=2, seed=5)
    summary = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert summary.components_hash == digest
    await play_game(client, game_id, tokens, seed=5)
    replay = await client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id))
    assert replay.game.components_hash == digest
    # the replay is valid with the set it names, and only with it
    decisions = [engine.parse_option(record.text) for record in replay.decisions]
    options = engine.GameOptions(players=2)
    rebuilt = engine.replay(options, replay.seed, decisions, printed)
    assert engine.state_hash(rebuilt) == replay.state_hash

    with sqlite3.connect(db) as stored:
        assert stored.execute(
            "SELECT components_hash FROM games WHERE game_id = ?", (game_id,)
        ).fetchone() == (digest,)


async def test_a_server_without_the_set_refuses_the_game(tmp_path: Path, start_server: StartServer) -> None:
    """A replica (here a second server on the same store) that holds another set refuses the game with
    FAILED_PRECONDITION and a sentence naming both sets, rather than rebuilding it with the wrong values."""
    _, printed = printed_set(tmp_path)
    db = str(tmp_path / "games.db")
    _, first = await start_server(db=db, components=printed)
    game_id, tokens, _ = await first.new_game(players=2, seed=6)
    _, other = await start_server(db=db)  # the packaged default set
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await other.play.GetObservation(
            play_service_pb2.GetObservationRequest(game_id=game_id, seat=0), metadata=bearer(tokens[0])
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    details = refused.value.details() or ""
    assert "component set" in details and engine.components_hash(printed)[:16] in details
    assert "--components" in details


def test_the_flag_and_its_variable_load_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, printed = printed_set(tmp_path)
    config = config_from_args(build_parser().parse_args(["--components", str(path)]))
    assert config.components is not None and engine.components_hash(
        config.components
    ) == engine.components_hash(printed)
    monkeypatch.setenv("KUTNAHORA_COMPONENTS", str(path))
    config = config_from_args(build_parser().parse_args([]))
    assert config.components is not None and config.components.name == "My printed set"


def test_a_broken_file_stops_the_server_with_a_sentence(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    raw = json.loads(resources.files("kutnahora.engine").joinpath("data/components.json").read_text())
    raw["buildings"][5]["effects"] = []
    broken.write_text(json.dumps(raw))
    done = subprocess.run(
        [sys.executable, "-m", "kutnahora.server.main", "--components", str(broken), "--db", ":memory:"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "--components" in done.stderr and "buildings[5].effects" in done.stderr


async def test_a_store_written_before_sets_were_recorded_gains_the_column(
    tmp_path: Path, start_server: StartServer
) -> None:
    """A SQLite file from an older server has no components_hash column: the store adds it on opening, and
    the old games (no hash) are still served."""
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as old:
        old.executescript(OLD_GAMES_TABLE)
    _, client = await start_server(db=str(db))
    game_id, tokens, _ = await client.new_game(players=2, seed=7)
    assert (await client.observe(game_id, 0, tokens[0])).version == 0
    with sqlite3.connect(db) as stored:
        columns = [row[1] for row in stored.execute("PRAGMA table_info(games)")]
    assert "components_hash" in columns


OLD_GAMES_TABLE = """
CREATE TABLE games (
    game_id TEXT PRIMARY KEY, created_at REAL NOT NULL, players INTEGER NOT NULL, events INTEGER NOT NULL,
    guild_setup_card INTEGER, mine_setup_card INTEGER, seed INTEGER NOT NULL, clock TEXT NOT NULL,
    label TEXT NOT NULL, game_token_hash TEXT NOT NULL, rules_version INTEGER NOT NULL, status TEXT NOT NULL,
    updated_at REAL NOT NULL, abandon_reason TEXT NOT NULL DEFAULT '', result TEXT
);
"""
