"""Each starter kit's README runs as written, top to bottom: its marked blocks (see
tests/clients/kit_builds.py for the convention) run in a copy of the kit, against a game server and an
arena this test starts, with their addresses put where the README says ``localhost:50051`` and
``localhost:50061``. The build block is the session's one build of the kit; the packages block must name
packages that are installed (the kit's README is the list an author follows), or whose command is (npm,
which NodeSource's nodejs package carries).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from tests.clients.helpers import start_process, stop_process
from tests.clients.kit_builds import KITS, build_kit, debian_packages, readme_blocks, run_block

SERVER = "localhost:50051"
ARENA = "localhost:50061"


@pytest.fixture(scope="module")
def arena_address(server_address: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An arena process (SQLite) with one random house bot, placing games on the session's server."""
    db = tmp_path_factory.mktemp("readme-arena") / "arena.db"
    process, address = start_process(
        "kutnahora.arena.main",
        *("--port", "0", "--server", server_address, "--db", str(db), "--house-bots", "random"),
        *("--pools", "2", "--open-after", "1", "--tick", "0.1", "--metrics-port", "off"),
        *("--log-level", "warning"),
    )
    try:
        yield address
    finally:
        stop_process(process)


def installed(package: str) -> bool:
    """Whether a Debian package is installed, or its command is (npm comes with NodeSource's nodejs)."""
    done = subprocess.run(["dpkg", "-s", package], capture_output=True, check=False)
    return done.returncode == 0 or shutil.which(package) is not None


def test_every_kit_readme_marks_its_blocks() -> None:
    for kit in KITS:
        kinds = [block.kind for block in readme_blocks(kit)]
        assert "build" in kinds and "arena" in kinds, f"clients/{kit}/README.md marks {kinds}"
        assert kinds.index("build") < kinds.index("arena")


@pytest.mark.parametrize("kit", KITS)
def test_the_kit_readme_runs_as_written(kit: str, server_address: str, arena_address: str) -> None:
    blocks = readme_blocks(kit)
    for block in blocks:
        if block.kind == "packages":
            names = debian_packages(block)
            assert names, block.text
            missing = [name for name in names if not installed(name)]
            assert not missing, f"clients/{kit}/README.md names packages that are not installed: {missing}"
    built = build_kit(kit)  # the README's build blocks, once per session
    # The kit never overwrites a key file, and the copy is kept between sessions: the keys an earlier
    # session's arena block registered (with an arena long gone) go first, as an author starting over would.
    for stale in built.folder.glob("*.key"):
        stale.unlink()
    places = {SERVER: server_address, ARENA: arena_address}
    for block in blocks:
        if block.kind in ("run", "server", "arena"):
            output = run_block(block, built.folder, timeout=300, replace=places)
            if block.kind == "server":
                # The tournament exits 0 even when a bot loses its seats: every game must have finished.
                assert re.search(r"(\d+) games \(\1 finished\)", output), output
            if block.kind == "arena":
                assert "rated, place " in output, output
                assert "game 2/2" in output, output
