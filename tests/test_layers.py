"""Who may import whom (docs/architecture.md#layers): the engine only the standard library, clients only
wire code."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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


ENGINE_COMMAND = "engine/cli.py"
"""``kutnahora-sim``, the engine's command line, which plays its games in the engine ``KUTNAHORA_ENGINE``
selects: it may import the native core's adapter, :mod:`kutnahora.native`; the rules may not."""


def test_the_engine_imports_only_the_standard_library() -> None:
    """engine/ is pure: no grpc, no protobuf, no logging framework, nothing outside the standard library."""
    allowed = set(sys.stdlib_module_names) | {"kutnahora.engine"}
    for path, names in imported_roots("engine").items():
        extra = {"kutnahora.native"} if path == ENGINE_COMMAND else set()
        assert names <= allowed | extra, f"{path} imports {sorted(names - allowed - extra)}"


def test_the_native_adapter_imports_only_the_engine_and_the_core() -> None:
    """native/ turns the C++ core's ints into the engine's values: the standard library, the engine and the
    core's module (``kutnahora_core``), nothing else."""
    allowed = set(sys.stdlib_module_names) | {"kutnahora.engine", "kutnahora.native", "kutnahora_core"}
    found = imported_roots("native")
    assert "native/game.py" in found
    for path, names in found.items():
        assert names <= allowed, f"{path} imports {sorted(names - allowed)}"


SEARCH_BOT = {"clients/bots/mcts.py", "clients/bots/neural.py", "clients/bots/neural_ladder.py"}
"""The search bots' modules: they simulate the game with the engine as a library
(docs/architecture.md#layers), but still receive their observation and send their decision over gRPC
(reading the observation back into the engine's with :mod:`kutnahora.wire`); the neural bot's ladder
plays them in process."""

NEURAL_BOT = {"clients/bots/neural.py", "clients/bots/neural_ladder.py"}
"""The neural bot's modules: its network reads the environments' observation vectors and action ids, so
they import :mod:`kutnahora.envs` (NumPy, the ``rl`` extra); the bot registry imports them only when a
neural bot is asked for."""

WIRE_USERS = ("server", "clients", "envs", "web", "bench")
"""The folders that may import the codec, :mod:`kutnahora.wire`; the engine and the generated wire code may
not (the codec sits above them)."""


def test_the_codec_imports_only_the_engine_and_the_wire_contract() -> None:
    """wire/ converts between the engine's values and ``kutnahora.v1``: it imports those two and the
    standard library, nothing else (no server, no clients, no grpc)."""
    allowed = set(sys.stdlib_module_names) | {"kutnahora.wire", "kutnahora.engine", "kutnahora.v1"}
    found = imported_roots("wire")
    assert "wire/__init__.py" in found
    for path, names in found.items():
        assert names <= allowed, f"{path} imports {sorted(names - allowed)}"


def test_only_the_layers_above_the_codec_import_it() -> None:
    """The engine and the generated code never import the codec; the layers above it may."""
    for folder in ("engine", "protos"):
        for path, names in imported_roots(folder).items():
            assert "kutnahora.wire" not in names, f"{path} imports kutnahora.wire"
    users = {
        folder
        for folder in WIRE_USERS
        for names in imported_roots(folder).values()
        if "kutnahora.wire" in names
    }
    assert {"server", "clients", "envs"} <= users, "the codec is no longer where the layers above convert"


@pytest.mark.parametrize("forbidden", ["kutnahora.engine", "kutnahora.server"])
def test_the_clients_use_only_the_protocol(forbidden: str) -> None:
    """Bots act only through the protocol: clients/ never imports the server, and only the search bot's
    modules import the engine."""
    for path, names in imported_roots("clients").items():
        if forbidden == "kutnahora.engine" and path in SEARCH_BOT:
            continue
        assert forbidden not in names, f"{path} imports {forbidden}"


def test_the_search_bot_imports_the_engine_and_no_server() -> None:
    """The exception above is real and no wider: those modules exist and use the engine, not the server."""
    roots = imported_roots("clients")
    for path in SEARCH_BOT:
        assert "kutnahora.engine" in roots[path], f"{path} no longer imports the engine"
        assert "kutnahora.server" not in roots[path]


def test_the_server_does_not_import_the_clients() -> None:
    """The server serves any client; it depends on none of ours."""
    for path, names in imported_roots("server").items():
        assert "kutnahora.clients" not in names, f"{path} imports clients"


ENVS_MAY_IMPORT = {
    "kutnahora.envs",
    "kutnahora.engine",
    "kutnahora.wire",
    "numpy",
    "gymnasium",
    "pettingzoo",
    "pyspiel",
    "open_spiel",
}


# The project's bots read wire observations: envs/opponents.py plays them in process, converting with the
# codec (kutnahora.wire, which every environment module may import).
OPPONENTS_MAY_IMPORT = {"kutnahora.clients", "kutnahora.v1"}


def test_the_environments_use_the_engine_and_the_learning_libraries_only() -> None:
    """envs/ adapts the engine to OpenSpiel, PettingZoo and Gymnasium: it imports the engine, numpy and
    those libraries, and the codec; only its opponents module also imports the bots and their wire code. No
    module imports the server."""
    for path, names in imported_roots("envs").items():
        allowed = set(sys.stdlib_module_names) | ENVS_MAY_IMPORT
        if path == "envs/opponents.py":
            allowed |= OPPONENTS_MAY_IMPORT
        # The train extra: PyTorch, the curve, the progress bar; bots as opponents. Expert iteration
        # (envs/distill.py) also runs the bots' searches, whose visit counts are its training targets;
        # the pipeline (envs/pipeline.py) measures what it made with the bots' ladder.
        if path in ("envs/training.py", "envs/distill.py", "envs/pipeline.py"):
            allowed |= OPPONENTS_MAY_IMPORT | {"torch", "matplotlib", "rich"}
        assert names <= allowed, f"{path} imports {sorted(names - allowed)}"


@pytest.mark.parametrize("folder", ["engine", "wire", "server", "clients"])
def test_nothing_below_depends_on_the_environments(folder: str) -> None:
    """The environments are an optional extra: the engine, server and clients run without them."""
    for path, names in imported_roots(folder).items():
        if path in NEURAL_BOT:
            continue
        assert "kutnahora.envs" not in names, f"{path} imports kutnahora.envs"


def test_the_game_authority_is_free_of_the_wire() -> None:
    """server/game.py and its records speak engine values only: the presenter owns every wire message."""
    wire = {"grpc", "google", "kutnahora.v1"}
    found = imported_roots("server")
    for name in ("server/game.py", "server/records.py"):
        assert not found[name] & wire, f"{name} imports {sorted(found[name] & wire)}"
        modules = set()
        for node in ast.walk(ast.parse((ROOT / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.update(f"{node.module}.{alias.name}" for alias in node.names)
                modules.add(node.module)
        assert "kutnahora.server.presenter" not in modules, f"{name} imports the presenter"


@pytest.mark.parametrize("forbidden", ["kutnahora.engine", "kutnahora.server"])
def test_the_web_front_end_uses_only_the_protocol(forbidden: str) -> None:
    """kutnahora-web is a game server's client like any bot: it never imports the engine or the server."""
    for path, names in imported_roots("web").items():
        assert forbidden not in names, f"{path} imports {forbidden}"


def test_nothing_below_the_web_front_end_imports_it() -> None:
    """The web front end sits on top: no other layer depends on it."""
    for folder in ("engine", "wire", "server", "clients", "bench"):
        for path, names in imported_roots(folder).items():
            assert "kutnahora.web" not in names, f"{path} imports the web front end"


PLUMBING_ALLOWED = {
    "kutnahora.plumbing",
    "kutnahora.v1",
    "grpc",
    "grpc_health",
    "grpc_reflection",
    "grpc_status",
}
"""What the shared service layer may import besides the standard library and third-party libraries: nothing of
either service, nor the engine."""


def test_the_services_meet_only_through_the_wire_contract_and_the_shared_layer() -> None:
    """The arena and the game server are two services: neither imports the other; what both need (logs,
    refusals and their details, credentials, health, reflection, the migration runner) is the shared layer
    kutnahora.plumbing, which imports neither of them nor the engine (docs/architecture.md#layers)."""
    for path, names in imported_roots("arena").items():
        assert "kutnahora.server" not in names, f"{path} imports the game server"
    for path, names in imported_roots("server").items():
        assert "kutnahora.arena" not in names, f"{path} imports the arena"
    found = imported_roots("plumbing")
    assert "plumbing/errors.py" in found
    ours = {
        "kutnahora.server",
        "kutnahora.arena",
        "kutnahora.engine",
        "kutnahora.clients",
        "kutnahora.web",
        "kutnahora.envs",
        "kutnahora.bench",
        "kutnahora.wire",
    }
    for path, names in found.items():
        assert not names & ours, f"{path} imports {sorted(names & ours)}"
