"""Who may import whom (DESIGN · Layers): the engine only the standard library, clients only wire code."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_roots(folder: str) -> dict[str, set[str]]:
    """Top-level module names imported by each Python file under ``folder``."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


def test_the_engine_imports_only_the_standard_library() -> None:
    """engine/ is pure: no grpc, no protobuf, no logging framework, nothing outside the standard library."""
    allowed = set(sys.stdlib_module_names) | {"engine"}
    for path, names in imported_roots("engine").items():
        assert names <= allowed, f"{path} imports {sorted(names - allowed)}"


@pytest.mark.parametrize("forbidden", ["engine", "server"])
def test_the_clients_use_only_the_protocol(forbidden: str) -> None:
    """Bots act only through the protocol: clients/ never imports the engine or the server."""
    for path, names in imported_roots("clients").items():
        assert forbidden not in names, f"{path} imports {forbidden}"


def test_the_server_does_not_import_the_clients() -> None:
    """The server serves any client; it depends on none of ours."""
    for path, names in imported_roots("server").items():
        assert "clients" not in names, f"{path} imports clients"
