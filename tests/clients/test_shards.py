"""``--shard K/N`` and ``kutnahora-tournament merge``: two shards merged are exactly one run with the seed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clients.helpers import run_module

TOURNAMENT = "kutnahora.clients.tournament.cli"
ARGS = ("--bots", "random,greedy", "--players", "2", "--games", "7", "--seed", "11", "--quiet")
PLAYED = ("index", "seed", "bots", "scores", "winners", "status", "groschen")


def played(path: Path) -> list[tuple[object, ...]]:
    return [tuple(g[k] for k in PLAYED) for g in json.loads(path.read_text())["games"]]


def test_two_shards_merged_equal_one_run(tmp_path: Path, server_address: str) -> None:
    common = (*ARGS, "--server", server_address, "--no-replays")
    whole = tmp_path / "whole.json"
    assert run_module(TOURNAMENT, *common, "--out", str(whole)).returncode == 0
    shards = []
    for part in (0, 1):
        shard = tmp_path / f"shard-{part}.json"
        done = run_module(TOURNAMENT, *common, "--shard", f"{part}/2", "--out", str(shard))
        assert done.returncode == 0, done.stderr
        assert [g[0] % 2 for g in played(shard)] == [part] * len(played(shard))
        shards.append(shard)
    merged, table = tmp_path / "merged.json", tmp_path / "merged.csv"
    done = run_module(TOURNAMENT, "merge", "--out", str(merged), "--csv", str(table), *map(str, shards))
    assert done.returncode == 0, done.stderr
    assert "Merged 7 games from 2 file(s)" in done.stdout
    assert played(merged) == played(whole)
    assert json.loads(merged.read_text())["standings"] == json.loads(whole.read_text())["standings"]
    assert "shard" not in json.loads(merged.read_text())["config"]


def test_merge_refuses_overlaps_other_tournaments_and_reports_gaps(
    tmp_path: Path, server_address: str
) -> None:
    common = (*ARGS, "--server", server_address, "--no-replays")
    first = tmp_path / "a.json"
    assert run_module(TOURNAMENT, *common, "--shard", "0/3", "--out", str(first)).returncode == 0
    twice = run_module(TOURNAMENT, "merge", "--out", str(tmp_path / "m.json"), str(first), str(first))
    assert twice.returncode == 2 and "game 0 is in more than one file" in twice.stderr
    gaps = run_module(TOURNAMENT, "merge", "--out", str(tmp_path / "m.json"), str(first))
    assert gaps.returncode == 1 and "4 game(s) are in no file: 1, 2, 4, 5" in gaps.stdout
    other = tmp_path / "b.json"
    data = json.loads(first.read_text())
    data["config"]["seed"] = 12
    other.write_text(json.dumps(data))
    mixed = run_module(TOURNAMENT, "merge", "--out", str(tmp_path / "m.json"), str(first), str(other))
    assert mixed.returncode == 2 and "another tournament: seed=12" in mixed.stderr
    bad = run_module(TOURNAMENT, *common, "--shard", "2/2")
    assert bad.returncode == 2 and "K must be 0 to N-1" in bad.stderr
