"""kutnahora-train's collection gives the same samples on the native core as on the engine: the same seed
deals the same games, and every vector, mask, action, log-probability, value, return and advantage is the
same, whichever engine plays the self-play and past-copy games (the bots' games stay on the engine)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kutnahora.envs.models import build_model, to_numpy
from kutnahora.envs.stepping import CoreGame, EngineGame
from kutnahora.envs.train import main
from kutnahora.envs.training import Buffer, Rollouts
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.native import ENGINE_VARIABLE, NATIVE, PYTHON, native_available

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not native_available(), reason="the native core is not built")

LEAGUE = "self=3,past=3,random=1,greedy=1,mcts:4=1"


def collected(
    engine: str, model: Any, pool: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], list[tuple[str, int, float]], set[type]]:
    """One collection's samples on ``engine`` (seed 5), the games finished and the kinds of game played."""
    config = {"players": "2=3,3=1,4=1", "opponents": LEAGUE, "games": 6, "pool_size": 2}
    played: set[type] = set()
    with monkeypatch.context() as patch:
        patch.setenv(ENGINE_VARIABLE, engine)
        rollouts = Rollouts(config, random.Random(5), pool)
        rollouts.load_pool()
        new_slot = rollouts._new_slot

        def noted() -> Any:
            slot = new_slot()
            played.add(type(slot.game))
            return slot

        patch.setattr(rollouts, "_new_slot", noted)
        buffer = Buffer(400, 1.0, 0.95)
        torch.manual_seed(11)
        rollouts.collect(model, buffer)
    return buffer.arrays(), rollouts.finished, played


def test_a_collection_takes_the_same_samples_on_the_core_and_on_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    torch.manual_seed(3)
    model = build_model(layout.size, [32, 16], space.size)
    model.eval()
    past = build_model(layout.size, [32, 16], space.size)
    meta = {"hidden": [32, 16], "observation": "normalized", "seed": 3}
    network.save(to_numpy(past, meta), tmp_path / "iter-00000.npz")  # the past copy

    python, python_finished, python_games = collected(PYTHON, model, tmp_path, monkeypatch)
    native, native_finished, native_games = collected(NATIVE, model, tmp_path, monkeypatch)

    assert python_games == {EngineGame}
    assert native_games == {CoreGame, EngineGame}  # the bots' games on the engine
    assert python_finished == native_finished
    assert {kind for kind, _, _ in python_finished} == {"self", "past", "random", "greedy", "mcts:4"}
    assert len(python["actions"]) >= 400
    for name in ("vectors", "masks", "actions", "logps", "returns", "advantages"):
        np.testing.assert_array_equal(python[name], native[name], err_msg=name)


def trained(run: Path, engines: list[str], monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A smoke run's history, trained to 512 samples on the first engine, then to 1024 by a resume on the
    second; the timings left out."""
    league = "--opponents=self=3,past=2,greedy=1"
    for engine, samples in zip(engines, ("512", "1024"), strict=True):
        with monkeypatch.context() as patch:
            patch.setenv(ENGINE_VARIABLE, engine)
            words = ["run", "--smoke", "--no-progress", "--run", str(run), "--samples", samples]
            words += ["--pool-every", "1", "--seed", "4", league]
            assert main([*words, "--resume"] if samples == "1024" else words) == 0
    history: list[dict[str, Any]] = json.loads((run / "history.json").read_text())
    return [{k: v for k, v in h.items() if not k.endswith("seconds")} for h in history]


def test_a_checkpoint_resumes_on_the_other_engine_as_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run checkpointed on the engine goes on on the core (and the other way) exactly as it would have
    on the engine it started on: the same games, returns and losses."""
    same = trained(tmp_path / "python", [PYTHON, PYTHON], monkeypatch)
    assert len(same) == 2 and any(kind.startswith("past") for kind in same[1]["games"])
    assert trained(tmp_path / "to-native", [PYTHON, NATIVE], monkeypatch) == same
    assert trained(tmp_path / "to-python", [NATIVE, PYTHON], monkeypatch) == same
