"""Who may import whom: docs/architecture.md's layer table is the rule (docs/architecture.md#layers). Each
row names what its subpackage may import besides the standard library and itself; every module of the
subpackage keeps to its row, with no exceptions, and every package a row names is imported by one of its
modules, so the table and the code agree both ways."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"

STANDARD = frozenset(sys.stdlib_module_names)


def layer(module: str) -> str:
    """The layer a module belongs to: ``kutnahora.engine`` for ``kutnahora.engine.state``, ``grpc`` for
    ``grpc.aio``; the wire code, ``kutnahora`` and ``kutnahora.v1``, is the layer ``kutnahora.v1``."""
    parts = module.split(".")
    if parts[0] != "kutnahora":
        return parts[0]
    return "kutnahora.v1" if len(parts) == 1 else f"kutnahora.{parts[1]}"


def imported_roots(folder: str) -> dict[str, set[str]]:
    """The layers imported by each Python file under ``folder``."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(layer(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "kutnahora":
                    names.update(layer(f"kutnahora.{alias.name}") for alias in node.names)
                else:
                    names.add(layer(node.module))
        found[str(path.relative_to(ROOT))] = names
    return found


def layer_table() -> dict[str, tuple[str, frozenset[str]]]:
    """docs/architecture.md's layer table: for each package, its folder and the packages it may import
    (every name in backquotes in the row's last column)."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split('<a id="layers"></a>', 1)[1].split("\n## ", 2)[1]
    rows: dict[str, tuple[str, frozenset[str]]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[1].startswith("`kutnahora"):
            continue
        folder, package, _, may_import = cells
        names = frozenset(re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", may_import))
        rows[package.strip("`")] = (folder.strip("`").rstrip("/"), names)
    return rows


TABLE = layer_table()


def test_the_table_has_a_row_for_every_subpackage() -> None:
    """Every folder pyproject.toml installs has its row, under the name it is installed with."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    installed = {layer(name): folder.split("/")[0] for name, folder in mapping.items()}
    assert {name: folder for name, (folder, _) in TABLE.items()} == installed


@pytest.mark.parametrize("package", sorted(TABLE))
def test_every_module_imports_only_what_its_row_allows(package: str) -> None:
    """A module imports the standard library, its own subpackage and what its row names; nothing else."""
    folder, allowed = TABLE[package]
    found = imported_roots(folder)
    assert found, f"{folder}/ holds no module"
    for path, names in found.items():
        extra = names - STANDARD - {package} - allowed
        assert not extra, f"{path} imports {sorted(extra)}, which the {package} row does not allow"


@pytest.mark.parametrize("package", sorted(TABLE))
def test_every_package_a_row_names_is_imported(package: str) -> None:
    """No row allows what its subpackage no longer imports: a stale arrow in the table fails here."""
    folder, allowed = TABLE[package]
    used = set().union(*imported_roots(folder).values())
    assert allowed <= used, f"the {package} row names {sorted(allowed - used)}, which {folder}/ never imports"


def test_the_layers_form_a_stack() -> None:
    """Between subpackages the arrows point one way: no two layers may import each other, and no chain of
    allowed imports comes back to where it started."""
    arrows = {package: {name for name in names if name in TABLE} for package, (_, names) in TABLE.items()}

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(
            step == goal or (step not in seen and reaches(step, goal, seen | {step}))
            for step in arrows[start]
        )

    for package in TABLE:
        assert not reaches(package, package), f"{package} imports itself through other layers"


def test_nothing_imports_the_web_front_end_or_the_environments_below_them() -> None:
    """The rules the table spells out that matter most: the engine is pure, the server depends on no client,
    the two services on neither, and nothing below the environments imports them (an optional extra)."""
    assert TABLE["kutnahora.engine"][1] == frozenset()
    for package, (_, names) in TABLE.items():
        assert "kutnahora.web" not in names, f"{package} may import the web front end"
    for below in (
        "kutnahora.engine",
        "kutnahora.wire",
        "kutnahora.learned",
        "kutnahora.server",
        "kutnahora.clients",
    ):
        assert "kutnahora.envs" not in TABLE[below][1], f"{below} may import the environments"
    assert "kutnahora.server" not in TABLE["kutnahora.arena"][1]
    assert not {"kutnahora.arena", "kutnahora.clients"} & TABLE["kutnahora.server"][1]
    assert not {"kutnahora.engine", "kutnahora.server", "kutnahora.arena"} & TABLE["kutnahora.plumbing"][1]


def test_the_game_authority_is_free_of_the_wire() -> None:
    """server/game.py and its records speak engine values only: the presenter owns every wire message."""
    wire = {"grpc", "google", "kutnahora.v1", "kutnahora.wire"}
    found = imported_roots("server")
    for name in ("server/game.py", "server/records.py"):
        assert not found[name] & wire, f"{name} imports {sorted(found[name] & wire)}"
        modules = set()
        for node in ast.walk(ast.parse((ROOT / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.update(f"{node.module}.{alias.name}" for alias in node.names)
                modules.add(node.module)
        for outgoing in ("kutnahora.server.feed", "kutnahora.server.messages", "kutnahora.server.reading"):
            assert outgoing not in modules, f"{name} imports {outgoing}"


def module_imports() -> dict[str, set[str]]:
    """Every module of the package under its installed name, with the project's modules it imports: at the
    top, inside a function or for types only, all count."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    paths: dict[str, Path] = {}
    for package, folder in mapping.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            paths.setdefault(".".join([package, *parts[: -1 if parts[-1] == "__init__" else None]]), path)
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in paths)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    found.add(
                        f"{node.module}.{alias.name}"
                        if f"{node.module}.{alias.name}" in paths
                        else node.module
                    )
        graph[module] = {name for name in found if name in paths and name != module}
    return graph


def test_no_module_imports_itself_back() -> None:
    """No circles between modules: each module's imports, followed, never come back to it (a circle hidden in
    a function or behind ``TYPE_CHECKING`` counts too)."""
    graph = module_imports()
    assert "kutnahora.server.config" in graph["kutnahora.server.config_reference"]
    for start in graph:
        seen: set[str] = set()
        path = [start]
        todo = [iter(sorted(graph[start]))]
        while todo:
            step = next(todo[-1], None)
            if step is None:
                todo.pop()
                path.pop()
                continue
            assert step != start, f"a circle: {' -> '.join([*path, start])}"
            if step not in seen:
                seen.add(step)
                path.append(step)
                todo.append(iter(sorted(graph[step])))
