"""Hosted submissions: manifests read and checked with messages naming the submission; the sandbox's
clear refusal when bubblewrap is missing; a rerun into the same --out keeps only its own replays; a build
finds the project's .proto files at $KUTNAHORA_PROTOS, walled or not, and cannot change them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kutnahora.hosting.sandbox import Sandbox, SandboxError
from kutnahora.hosting.submission import SubmissionError, check_run_command, load
from tests.clients.helpers import ROOT, run_module

TOURNAMENT = "kutnahora.clients.tournament.cli"


def manifest(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kutnahora-bot.toml").write_text(text)
    return folder


def test_a_good_manifest_is_read(tmp_path: Path) -> None:
    folder = manifest(tmp_path / "b", 'name = "b-1"\nlanguage = "go"\nbuild = "go build"\nrun = "./bot"\n')
    submission = load(folder)
    assert (submission.name, submission.language, submission.build, submission.run) == (
        "b-1",
        "go",
        "go build",
        "./bot",
    )
    assert load(manifest(tmp_path / "c", 'name="c"\nlanguage="py"\nrun="python3 x.py"\n')).build is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = ", "is not valid TOML"),
        ('name = "x"\nlanguage = "c"\n', "lacks run"),
        ('name = "x"\nrun = "a"\n', "lacks language"),
        ('name = "x y"\nlanguage = "c"\nrun = "a"\n', "name 'x y' must be"),
        ('name = "x"\nlanguage = "c"\nrun = 3\n', "field 'run' must be a string"),
        ('name = "x"\nlanguage = "c"\nrun = "a"\nlimits = 1\n', "unknown field(s) limits"),
    ],
)
def test_a_bad_manifest_names_the_submission(tmp_path: Path, text: str, message: str) -> None:
    folder = manifest(tmp_path / "mine", text)
    with pytest.raises(SubmissionError) as raised:
        load(folder)
    assert f"submission {folder}" in str(raised.value)
    assert message in str(raised.value)


def test_a_folder_without_a_manifest_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionError, match=r"empty: no kutnahora-bot\.toml in it"):
        load(tmp_path / "empty")


def test_a_run_command_whose_program_is_missing_is_named(tmp_path: Path) -> None:
    folder = manifest(tmp_path / "m", 'name = "m"\nlanguage = "c"\nrun = "./bot --fast"\n')
    with pytest.raises(SubmissionError, match=r"submission m: the run command.s program \./bot is not in"):
        check_run_command(load(folder), "/usr/bin")
    (folder / "bot").write_text("")
    check_run_command(load(folder), "/usr/bin")
    other = manifest(tmp_path / "n", 'name = "n"\nlanguage = "x"\nrun = "X=1 no-such-program-here"\n')
    with pytest.raises(SubmissionError, match="'no-such-program-here' is not installed"):
        check_run_command(load(other), "/usr/bin")


def test_a_missing_bubblewrap_is_a_clear_error_not_a_fallback(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"bubblewrap .bwrap. is not installed.*--sandbox none"):
        Sandbox(bwrap="no-such-bwrap").check()
    folder = manifest(tmp_path / "s" / "a", 'name = "a"\nlanguage = "py"\nrun = "python3 a.py"\n')
    done = run_module(
        TOURNAMENT,
        "--submissions",
        str(folder.parent),
        "--games",
        "1",
        "--players",
        "2",
        env={"PATH": str(tmp_path)},  # no bwrap on this PATH
    )
    assert done.returncode == 2
    assert "bubblewrap (bwrap) is not installed" in done.stderr


def test_a_rerun_into_the_same_out_replaces_the_earlier_replays(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    args = ("--bots", "random,greedy", "--players", "2", "--games", "2", "--quiet", "--out", str(out))
    first = run_module(TOURNAMENT, *args, "--seed", "1")
    assert first.returncode == 0, first.stderr
    replays = tmp_path / "results.replays"
    before = {p.name for p in replays.glob("*.json")}
    assert len(before) == 2
    second = run_module(TOURNAMENT, *args, "--seed", "2")
    assert second.returncode == 0, second.stderr
    after = {p.name for p in replays.glob("*.json")}
    assert len(after) == 2 and not after & before
    assert f"Removed 2 file(s) of an earlier run from {replays}." in second.stderr  # whole, however long


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_build_finds_the_protos_read_only(tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    protos = "$KUTNAHORA_PROTOS/kutnahora/v1"
    build = f'cp "{protos}/game_service.proto" "{protos}/play_service.proto" .'
    if sandbox == "bwrap":  # read-only inside; unwalled, a build could change the run's own copy only
        build += f' && if touch "{protos}/written" 2>/dev/null; then echo LEAKED; exit 1; fi'
    else:
        build += f' && touch "{protos}/written"'

    folder = manifest(
        tmp_path / "s" / "proto-user",
        f'name = "proto-user"\nlanguage = "sh"\nbuild = {json.dumps(build)}\n'
        f'run = "python3 -m kutnahora.clients.bots.cli greedy"\n',
    )
    out = tmp_path / "results.json"
    done = run_module(
        TOURNAMENT,
        *("--submissions", str(folder.parent), "--bots", "random", "--players", "2", "--games", "1"),
        *("--sandbox", sandbox, "--out", str(out), "--quiet"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads(out.read_text())["games"]
    assert games[0]["status"] == "finished" and games[0]["failures"] == [], games
    assert not (folder / "game_service.proto").exists()  # built in the runner's copy
    assert not (ROOT / "protos" / "kutnahora" / "v1" / "written").exists()


def test_the_sandbox_binds_every_subpackage_the_package_maps() -> None:
    """A walled-in Python bot sees every subpackage of ``kutnahora`` (a bot imports the search bot, which
    imports the native core's adapter, and the neural bot, which imports the learned network): the
    sandbox's list is pyproject.toml's mapping."""
    import tomllib

    from kutnahora.hosting.sandbox import SUBPACKAGES

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = {name.split(".", 1)[1] for name in config["tool"]["setuptools"]["package-dir"] if "." in name}
    assert set(SUBPACKAGES) == mapped | {"v1"}
