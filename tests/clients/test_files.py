"""Files written whole: what a reader of a report or a record sees while it is rewritten, or after a
failed write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kutnahora.clients.files import write_json


def test_writes_the_value_and_makes_the_folder(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "report.json"
    write_json(target, {"games": [1, 2], "name": "ladder"})
    assert json.loads(target.read_text()) == {"games": [1, 2], "name": "ladder"}
    assert target.read_text().endswith("\n")
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    write_json(target, {"games": 3})
    with pytest.raises(TypeError):
        write_json(target, {"games": 4, "clock": object()})  # not JSON: fails halfway through the dump
    assert json.loads(target.read_text()) == {"games": 3}
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_the_file_gets_the_umask_permissions(tmp_path: Path) -> None:
    """A report is readable by whoever may read the folder's other files (a temporary-file helper's
    owner-only mode would hide it from a web server or a teammate)."""
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "report.json", [])
    finally:
        os.umask(old)
    assert (tmp_path / "report.json").stat().st_mode & 0o777 == 0o644
