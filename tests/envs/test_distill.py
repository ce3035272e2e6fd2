"""kutnahora-train distill: a searched sample targets the legal actions only, its mask is the legal options,
its vector is what the network reads and its return the game's; shards read back as written; an
interrupted generation goes on without losing or repeating a game; the loss falls on a fixed dataset; the
value learns the blend of returns and searches' values asked for."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kutnahora.engine import GameState, Option, observe
from kutnahora.envs import distill, searched_games
from kutnahora.envs.distill import Replay
from kutnahora.envs.searched_games import Searcher, Task, generate, learner_plays, plan, play_searched_game
from kutnahora.envs.shards import Samples, read_shard, shard_games, shard_path, write_shard
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.outcome import returns

LAYOUT = ObservationLayout()
SPACE = ActionSpace(LAYOUT.components)


@pytest.mark.parametrize("searcher", ["mcts:2", "neural:2"])
def test_every_searched_decision_is_a_sample_of_the_legal_actions(
    searcher: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[int, list[int], np.ndarray[Any, Any]]] = []
    valued: list[float] = []
    original = Searcher.visits

    def recording(
        self: Searcher, state: GameState, seat: int, rng: random.Random, evaluator: Any
    ) -> tuple[dict[Option, int], Option, float]:
        assert state.pending is not None and len(state.pending.options) > 1
        vector = LAYOUT.encode(observe(state, seat), normalized=True)
        asked.append((seat, SPACE.ids(state.pending.options), vector))
        found = original(self, state, seat, rng, evaluator)
        valued.append(found[2])
        return found

    monkeypatch.setattr(Searcher, "visits", recording)
    evaluator = searched_games._evaluator(str(network.WEIGHTS)) if searcher.startswith("neural") else None
    samples, state = play_searched_game(Searcher.parse(searcher), 2, 5, 4, evaluator, LAYOUT)
    assert state.over
    assert len(samples) == len(asked) > 50  # one sample per decision with two or more options
    final = returns(state)
    vectors = samples.vectors(np.arange(len(samples)), LAYOUT.size)
    for row, (seat, ids, vector) in enumerate(asked):
        legal = np.zeros(SPACE.size, bool)
        legal[ids] = True
        assert (samples.masks[row] == legal).all()
        target = samples.targets[row]
        assert abs(float(target.sum()) - 1.0) < 1e-5
        assert (target >= 0).all() and not target[~legal].any()
        assert samples.seats[row] == seat
        assert samples.returns[row] == final[seat]
        assert samples.searched[row] == np.float32(valued[row])  # the search's own value, as it said
        assert -1.0 <= valued[row] <= 1.0
        assert np.array_equal(vectors[row], vector)  # the network's own input


def test_a_searcher_is_named_with_its_budget() -> None:
    assert Searcher.parse("mcts:200") == Searcher("mcts", 200, None)
    assert str(Searcher.parse("neural:150ms")) == "neural:150ms"
    for bad in ("greedy", "mcts", "mcts:0", "neural:x"):
        with pytest.raises(ValueError):
            Searcher.parse(bad)
    assert plan(3, 17, {"2": 1, "4": 1}) == plan(3, 17, {"2": 1, "4": 1})  # a game's plan is its number's
    assert len({plan(3, g, {"2": 1})[1] for g in range(20)}) == 20


def test_a_shard_reads_back_as_written(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rows = 7
    vectors = [np.where(rng.random(LAYOUT.size) < 0.05, rng.random(LAYOUT.size), 0).astype(np.float32)]
    vectors += [np.zeros(LAYOUT.size, np.float32)]  # an all-zero row survives the sparse form
    vectors += [
        rng.random(LAYOUT.size).astype(np.float32) * (rng.random(LAYOUT.size) < 0.1) for _ in range(5)
    ]
    masks = [rng.random(SPACE.size) < 0.1 for _ in range(rows)]
    targets = [np.where(m, 1.0 / max(m.sum(), 1), 0).astype(np.float32) for m in masks]
    written = Samples.from_rows(
        vectors,
        masks,
        targets,
        [1.0, -1.0, 0.0, 1, 1, -1, 0],
        [0, 1] * 3 + [0],
        SPACE.size,
        [0.5, -0.25, 0.0, 0.75, 1.0, -1.0, 0.125],
    )
    path = write_shard(tmp_path, 12, written, {"players": 2})
    assert path == shard_path(tmp_path, 12) and shard_games(tmp_path) == [12]
    read = read_shard(path)
    for field in ("indptr", "indices", "values", "masks", "targets", "returns", "seats", "searched"):
        assert np.array_equal(getattr(read, field), getattr(written, field)), field
        assert getattr(read, field).dtype == getattr(written, field).dtype, field
    assert np.array_equal(read.vectors(np.arange(rows), LAYOUT.size), np.stack(vectors))
    # Two shards, a window of the newest five samples: the last five rows, in order.
    write_shard(tmp_path, 13, written.tail(3), {"players": 2})
    window = Replay(tmp_path, SPACE.size).window(5)
    assert np.array_equal(window.vectors(np.arange(5), LAYOUT.size), np.stack(vectors[5:] + vectors[4:]))
    assert np.array_equal(window.returns, np.array([-1, 0, 1, -1, 0], np.float32))
    assert np.array_equal(window.searched, np.array([-1, 0.125, 1, -1, 0.125], np.float32))
    # A shard written before the searches' values were kept reads its returns in their place.
    with np.load(path) as archive:
        old = {k: archive[k] for k in archive.files if k != "searched"}
    np.savez_compressed(shard_path(tmp_path, 14), **old)
    assert np.array_equal(read_shard(shard_path(tmp_path, 14)).searched, written.returns)


def test_an_interrupted_generation_goes_on_without_losing_or_repeating_a_game(tmp_path: Path) -> None:
    def tasks(data: Path) -> list[Task]:
        out = []
        for game in range(3):
            players, seed = plan(9, game, {"2": 1})
            out.append(Task(game, players, seed, "mcts:1", 5, str(data), None))
        return out

    whole, broken = tmp_path / "whole", tmp_path / "broken"
    generate(tasks(whole), 1, lambda game, count: None)
    played: list[int] = []
    generate(tasks(broken)[:1], 1, lambda game, count: played.append(game))  # then the crash:
    (broken / "game-0000001.npz.part").write_bytes(b"half a shard")  # one shard half written
    generate(tasks(broken), 1, lambda game, count: played.append(game))  # --resume
    assert played == [0, 1, 2]  # each game once
    assert shard_games(broken) == shard_games(whole) == [0, 1, 2]
    for game in range(3):
        a, b = read_shard(shard_path(whole, game)), read_shard(shard_path(broken, game))
        assert np.array_equal(a.targets, b.targets) and np.array_equal(a.values, b.values)
        assert np.array_equal(a.returns, b.returns)


def test_the_loss_falls_on_a_fixed_dataset() -> None:
    torch = pytest.importorskip("torch")
    from kutnahora.envs.models import build_model

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    rows, inputs, actions = 64, 40, 12
    vectors = [
        np.where(rng.random(inputs) < 0.3, rng.random(inputs), 0).astype(np.float32) for _ in range(rows)
    ]
    masks = [rng.random(actions) < 0.5 for _ in range(rows)]
    for m in masks:
        m[0] = True
    targets = []
    for m in masks:
        t = np.where(m, rng.random(actions), 0).astype(np.float32)
        targets.append(t / t.sum())
    samples = Samples.from_rows(vectors, masks, targets, rng.choice([-1.0, 1.0], rows), [0] * rows, actions)
    model = build_model(inputs, [16], actions)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)

    def loss() -> float:
        with torch.no_grad():
            total, _, _ = distill.losses(
                model,
                torch.from_numpy(samples.vectors(np.arange(rows), inputs)),
                torch.from_numpy(samples.masks),
                torch.from_numpy(samples.targets),
                torch.from_numpy(samples.returns),
                1.0,
            )
        return float(total)

    before = loss()
    stats = distill.train_epochs(model, optimiser, samples, inputs, 10, 16, 1.0, np.random.default_rng(1))
    assert stats["steps"] == 40
    assert loss() < before - 0.2
    assert stats["policy_loss"] >= stats["target_entropy"] - 1e-3  # cross-entropy is at least the entropy


def test_the_shipped_network_is_where_training_starts() -> None:
    torch = pytest.importorskip("torch")
    from kutnahora.envs.models import to_numpy

    model, hidden = distill.initial_model(str(network.WEIGHTS), [], LAYOUT.size, SPACE.size)
    shipped = network.load(network.WEIGHTS)
    assert hidden == [int(w.shape[1]) for w, _ in shipped.trunk]
    rng = np.random.default_rng(2)
    batch = np.where(rng.random((4, LAYOUT.size)) < 0.05, 1.0, 0.0).astype(np.float32)
    with torch.no_grad():
        logits, values = model(torch.from_numpy(batch))
    expected_logits, expected_values = shipped.forward(batch)
    assert np.allclose(logits.numpy(), expected_logits, atol=1e-4)
    assert np.allclose(values.numpy(), expected_values, atol=1e-5)
    assert np.allclose(to_numpy(model, {}).forward(batch)[0], expected_logits, atol=1e-4)
    with pytest.raises(ValueError, match="checkpoint"):
        distill.initial_model(str(network.WEIGHTS.parent), [], LAYOUT.size, SPACE.size)


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_the_value_learns_the_blend_of_returns_and_searches_values(share: float) -> None:
    torch = pytest.importorskip("torch")
    from kutnahora.envs.models import build_model

    torch.manual_seed(0)
    rng = np.random.default_rng(3)
    rows, inputs, actions = 128, 20, 6
    vectors = [rng.random(inputs).astype(np.float32) for _ in range(rows)]
    masks = [np.ones(actions, bool)] * rows
    targets = [np.full(actions, 1 / actions, np.float32)] * rows
    # Every game won (+1), every search pessimistic (−0.5): the value's target is their blend.
    samples = Samples.from_rows(vectors, masks, targets, [1.0] * rows, [0] * rows, actions, [-0.5] * rows)
    model = build_model(inputs, [16], actions)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    distill.train_epochs(model, optimiser, samples, inputs, 40, 32, 1.0, np.random.default_rng(1), share)
    with torch.no_grad():
        _, values = model(torch.from_numpy(samples.vectors(np.arange(rows), inputs)))
    expected = (1 - share) * 1.0 + share * -0.5
    assert abs(float(values.mean()) - expected) < 0.1, (float(values.mean()), expected)


def test_held_out_games_are_never_trained_on_and_are_measured(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from kutnahora.envs.models import build_model, to_numpy

    rng = np.random.default_rng(4)
    inputs, actions = 12, 5
    for game in range(10):  # game g's samples all return g / 10: which games a window holds is visible
        rows = 3
        vectors = [rng.random(inputs).astype(np.float32) for _ in range(rows)]
        masks = [rng.random(actions) < 0.7 for _ in range(rows)]
        for m in masks:
            m[0] = True
        targets = [np.where(m, 1.0 / m.sum(), 0).astype(np.float32) for m in masks]
        outcome = [(game / 10) * (-1) ** r for r in range(rows)]
        write_shard(
            tmp_path, game, Samples.from_rows(vectors, masks, targets, outcome, [0] * rows, actions), {}
        )
    assert [distill.held_out(g, 5) for g in range(10)] == [False] * 4 + [True] + [False] * 4 + [True]
    trained = Replay(tmp_path, actions, 5).window(100)
    held = Replay(tmp_path, actions, 5, held=True).window(100)
    assert sorted({round(abs(float(r)) * 10) for r in trained.returns}) == [0, 1, 2, 3, 5, 6, 7, 8]
    assert sorted({round(abs(float(r)) * 10) for r in held.returns}) == [4, 9]
    assert len(Replay(tmp_path, actions).window(100)) == 30  # none held out: every game

    torch.manual_seed(0)
    model = build_model(inputs, [8], actions)
    measured = distill.measure(model, held, inputs, batch=4)  # batches of 4 over 6 samples
    logits, values = to_numpy(model, {}).forward(held.vectors(np.arange(len(held)), inputs))
    masked = np.where(held.masks, logits, -1e9)
    logp = (
        masked
        - np.log(np.exp(masked - masked.max(1, keepdims=True)).sum(1, keepdims=True))
        - masked.max(1, keepdims=True)
    )
    policy = -np.where(held.masks, held.targets * logp, 0).sum(1).mean()
    assert measured["samples"] == 6
    assert measured["policy_loss"] == pytest.approx(policy, abs=1e-4)
    assert measured["value_loss"] == pytest.approx(float(((values - held.returns) ** 2).mean()), abs=1e-4)
    right = [(v > 0) == (r > 0) for v, r in zip(values, held.returns, strict=True) if r != 0]
    assert measured["value_sign"] == pytest.approx(sum(right) / len(right), abs=1e-4)


def test_a_learner_game_is_played_by_the_network_and_labelled_by_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    net = network.load(network.WEIGHTS)
    explore = 3
    played: list[tuple[tuple[Option, ...], Option]] = []
    original = searched_games.apply

    def recording(state: GameState, option: Option) -> Any:
        assert state.pending is not None
        if len(state.pending.options) > 1:
            played.append((state.pending.options, option))
        return original(state, option)

    monkeypatch.setattr(searched_games, "apply", recording)
    samples, state = play_searched_game(Searcher.parse("mcts:2"), 2, 8, explore, None, LAYOUT, learner=net)
    assert state.over and len(samples) == len(played) > 50
    logits, _ = net.forward(samples.vectors(np.arange(len(samples)), LAYOUT.size))
    for row in range(explore, len(samples)):
        options, option = played[row]  # after the explored moves, the network's favourite is played
        ids = SPACE.ids(options)
        assert option == options[int(np.argmax(logits[row, ids]))]
        assert abs(float(samples.targets[row].sum()) - 1.0) < 1e-5  # the target is still the search's
    assert learner_plays(1, 5, 0.0) is False and learner_plays(1, 5, 1.0) is True
    share = sum(learner_plays(1, g, 0.5) for g in range(400)) / 400
    assert 0.4 < share < 0.6
