"""Files written whole: what a reader of a report or a record sees while it is rewritten, or after a
failed write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def _dead_pid() -> int:
    """The process id of a child that has ended (and been reaped), so no process has it now."""
    code = "import os; print(os.getpid())"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)


def test_a_killed_writers_temporary_is_removed_by_the_next_writer(tmp_path: Path) -> None:
    """A writer killed mid-write leaves its temporary; the next process writing that target removes it,
    but not a temporary of a writer still running, nor another target's."""
    target = tmp_path / "report.json"
    dead = tmp_path / f".report.json.{_dead_pid()}.part"
    dead.write_text('{"half": ')
    alive = tmp_path / f".report.json.{os.getppid()}.part"  # the test runner's parent: running
    alive.write_text("{")
    other = tmp_path / f".other.json.{_dead_pid()}.part"
    other.write_text("{")
    write_json(target, {"games": 1})
    assert json.loads(target.read_text()) == {"games": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["report.json", alive.name, other.name])
