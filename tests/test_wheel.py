"""The wheel a bot author installs: one package, ``kutnahora``, with its data, stubs and markers.

The wheel is built from this checkout, inspected, and installed into a fresh virtual environment (its
dependencies come from the package index pip is configured with); from there, outside the checkout, a
server and a bot play a whole game through the installed commands.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TYPED = [
    "kutnahora",
    "kutnahora/engine",
    "kutnahora/server",
    "kutnahora/clients",
    "kutnahora/bench",
    "kutnahora/learned",
    "kutnahora/envs",
    "kutnahora/web",
    "kutnahora/arena",
    "kutnahora/plumbing",
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), ROOT],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", TMPDIR=str(build)),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (found,) = out.glob("kutnahora-*.whl")
    return found


def test_the_wheel_installs_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"kutnahora"}, f"the wheel installs {sorted(tops)} at the top of site-packages"
    # the default build is pure Python (setup.py compiles only under KUTNAHORA_COMPILE=1)
    assert not [name for name in names if name.endswith((".so", ".pyd"))]
    for package in TYPED:
        assert f"{package}/py.typed" in names, f"{package} has no py.typed marker"
    assert "kutnahora/engine/data/components.json" in names
    # The learned bots' networks ship with what plays them, below the environments.
    weights = {"neural.npz", "neural.json", "guide.npz", "guide.json"}
    assert {f"kutnahora/learned/weights/{name}" for name in weights} <= set(names)
    protos = {name for name in names if name.startswith("kutnahora/v1/") and name.endswith(".proto")}
    assert {"kutnahora/v1/game.proto", "kutnahora/v1/play_service.proto"} <= protos
    assert "kutnahora/v1/game_pb2.pyi" in names
    # The web pages need nothing from elsewhere: their scripts, styles and templates ship in the wheel.
    web = {"static/game.js", "static/board.js", "static/lobby.js", "static/style.css", "templates/game.html"}
    assert {f"kutnahora/web/{name}" for name in web} <= set(names)
    assert not [name for name in names if "/tests/" in name or name.startswith("tests/")]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment holding the wheel and its dependencies; yields its bin folder."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    bin_dir = home / "bin"
    done = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
        check=False,
    )
    if done.returncode != 0 and "No matching distribution" in done.stderr:
        pytest.skip(f"the package index cannot be reached to install dependencies: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    yield bin_dir


def clean_env(bin_dir: Path) -> dict[str, str]:
    """The environment of a user who has only the virtual environment: no checkout on any path."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env["PATH"] = f"{bin_dir}{os.pathsep}/usr/bin:/bin"
    return env


def test_the_installed_package_comes_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    code = (
        "import kutnahora.engine, kutnahora.server, kutnahora.clients, kutnahora.v1.game_pb2 as g;"
        "import importlib.util as u;"
        "print(kutnahora.engine.__file__);"
        "print([n for n in ('engine', 'server', 'clients', 'bench') if u.find_spec(n)])"
    )
    done = subprocess.run(
        [str(installed / "python"), "-c", code],
        cwd=tmp_path,
        env=clean_env(installed),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    where, leaked = done.stdout.splitlines()
    assert "site-packages/kutnahora/engine" in where
    assert str(ROOT) not in where
    assert leaked == "[]"


def test_a_bot_game_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    env = clean_env(installed)
    server = subprocess.Popen(
        [str(installed / "kutnahora-server"), "--port", "0", "--db", ":memory:", "--metrics-port", "off"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        match = re.search(r"listening on grpc://(\S+)", line)
        assert match, f"kutnahora-server did not start: {line!r}"
        done = subprocess.run(
            [
                str(installed / "kutnahora-bot"),
                "greedy",
                "--server",
                match.group(1),
                "--create",
                "--players",
                "2",
                "--fill",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "finished" in done.stdout
        assert "(winner" in done.stdout
    finally:
        server.terminate()
        server.wait(10)
