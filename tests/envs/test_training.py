"""kutnahora-train: a smoke run writes its checkpoint, networks, history, evaluations and curve; a resume goes
on from the checkpoint; an export writes the weights file and its record; the NumPy network computes what
the PyTorch model computes; a run never writes into a folder that holds something."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from kutnahora.clients.files import write_json
from kutnahora.clients.tournament.stats import wilson
from kutnahora.envs import models, run_folder
from kutnahora.envs.train import main
from kutnahora.envs.training import Buffer, parse_weights
from kutnahora.learned import network
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import ObservationLayout
from tests.stopping import terminate_when

torch = pytest.importorskip("torch")


def test_a_smoke_run_resumes_and_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["run", "--smoke", "--no-progress", "--run", str(run), "--seed", "3"]) == 0
    config = json.loads((run / "config.json").read_text())
    assert config["seed"] == 3 and config["commands"][0].startswith("kutnahora-train run --smoke")
    history = json.loads((run / "history.json").read_text())
    assert history and history[-1]["samples"] >= 1024
    evaluations = json.loads((run / "evaluations.json").read_text())
    assert {e["policy"] for e in evaluations} == {"deterministic", "sampled"}
    assert {(e["opponent"], e["players"]) for e in evaluations} == {("greedy", 2), ("greedy", 4)}
    for entry in evaluations:
        low, high = entry["wilson95"]
        assert 0 <= low <= entry["win_rate"] <= high <= 1
    assert (run / "curve.png").read_bytes()[:4] == b"\x89PNG"
    first_iterations = history[-1]["iteration"]

    resume = ["run", "--smoke", "--no-progress", "--run", str(run), "--resume", "--samples", "2048"]
    assert main([*resume, "--opponents=self=1,greedy=1"]) == 0
    history = json.loads((run / "history.json").read_text())
    assert history[-1]["iteration"] > first_iterations and history[-1]["samples"] >= 2048
    assert [h["iteration"] for h in history] == list(range(1, len(history) + 1))
    config = json.loads((run / "config.json").read_text())
    assert len(config["commands"]) == 2 and "--resume" in config["commands"][1]
    assert config["opponents"] == "self=1,greedy=1" and config["samples"] == 2048  # given again: taken
    assert config["players"] == "2=7,3=1,4=2"  # not given: kept

    target = tmp_path / "shipped" / "neural.npz"
    assert main(["export", str(run), "--to", str(target)]) == 0
    record = json.loads(target.with_suffix(".json").read_text())
    assert record["iteration"] == history[-1]["iteration"] and record["training_seed"] == 3
    assert record["exported_by"] == "kutnahora-train export run --to shipped/neural.npz"
    assert record["trained_by"] == [c.replace(f"{tmp_path}/", "") for c in config["commands"]]
    assert all("--run run" in c for c in record["trained_by"])
    net = network.load(target)
    assert net.meta["samples"] == history[-1]["samples"]


def test_a_run_refuses_a_folder_that_holds_something(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    for command in ("run", "distill"):
        assert main([command, "--smoke", "--no-progress", "--run", str(tmp_path)]) == 2
        assert "not empty" in capsys.readouterr().err
        assert (tmp_path / "precious.txt").read_text() == "keep me"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.txt"]
    assert main(["run", "--smoke", "--no-progress", "--run", str(tmp_path / "none"), "--resume"]) == 2
    assert main(["export", str(tmp_path / "none")]) == 2


def test_sigterm_stops_a_run_as_ctrl_c_does_and_resume_goes_on(tmp_path: Path) -> None:
    """``kill``, a service manager or a container's stop sends SIGTERM: the run stops with Ctrl-C's
    sentence and status (its default ended the process where it stood, saying nothing), and ``--resume``
    goes on from the last checkpoint."""
    run = tmp_path / "run"
    command = [sys.executable, "-m", "kutnahora.envs.train", "run", "--smoke", "--no-progress"]
    command += ["--run", str(run), "--samples", "100000000", "--checkpoint-minutes", "0"]
    status, error = terminate_when(command, (run / "checkpoint.pt").exists)
    assert status == 130, error
    assert f"stopped; {run} keeps its last checkpoint, --resume goes on" in error
    assert "Traceback" not in error
    saved = json.loads((run / "history.json").read_text())[-1]
    resume = ["run", "--resume", "--no-progress", "--run", str(run), "--samples", str(saved["samples"] + 1)]
    assert main(resume) == 0
    history = json.loads((run / "history.json").read_text())
    assert [h["iteration"] for h in history] == list(range(1, saved["iteration"] + 2))


def test_a_resume_drops_the_records_written_past_its_checkpoint(tmp_path: Path) -> None:
    """A checkpoint writes history.json and evaluations.json, then checkpoint.pt: stopped in between, the
    records hold an iteration the checkpoint does not, which a resume makes again and must not hold twice."""
    assert run_folder.records_until(tmp_path, 3) == ([], [])  # stopped before the first records
    write_json(tmp_path / "history.json", [{"iteration": i, "samples": 512 * i} for i in (1, 2, 3)])
    write_json(tmp_path / "evaluations.json", [{"iteration": i, "wins": i} for i in (2, 2, 3)])
    history, evaluations = run_folder.records_until(tmp_path, 2)
    assert [h["iteration"] for h in history] == [1, 2] and [e["iteration"] for e in evaluations] == [2, 2]
    assert [h["iteration"] for h in run_folder.records_until(tmp_path, 3)[0]] == [1, 2, 3]


def test_the_numpy_network_computes_what_the_torch_model_computes(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = models.build_model(300, [32, 16], 20)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.1)
    net = models.to_numpy(model, {"hidden": [32, 16]})
    network.save(net, tmp_path / "n.npz", np.float32)
    loaded = network.load(tmp_path / "n.npz")
    rng = np.random.default_rng(1)
    batch = np.where(rng.random((5, 300)) < 0.1, rng.random((5, 300)), 0).astype(np.float32)
    logits, values = loaded.forward(batch)
    with torch.no_grad():
        expected_logits, expected_values = model(torch.from_numpy(batch))
    assert np.allclose(logits, expected_logits.numpy(), atol=1e-5)
    assert np.allclose(values, expected_values.numpy(), atol=1e-6)
    network.save(net, tmp_path / "h.npz")  # float16 by default: close, half the size
    half, _ = network.load(tmp_path / "h.npz").forward(batch)
    assert np.allclose(half, logits, atol=2e-2)


def test_advantages_credit_the_final_return_back_through_a_seats_decisions() -> None:
    buffer = Buffer(3, gamma=1.0, lam=1.0)
    for value in (0.1, 0.2, 0.3):
        buffer.add(np.zeros(2, np.float32), np.ones(2, bool), 0, -0.5, value)
    buffer.end([0, 1, 2], 1.0)
    data = buffer.arrays()
    assert np.allclose(data["returns"], [1.0, 1.0, 1.0])  # lambda 1: every target is the return
    assert np.allclose(data["advantages"], [0.9, 0.8, 0.7])
    half = Buffer(2, gamma=1.0, lam=0.0)
    half.add(np.zeros(2, np.float32), np.ones(2, bool), 0, 0.0, 0.5)
    half.add(np.zeros(2, np.float32), np.ones(2, bool), 0, 0.0, -0.25)
    half.end([0, 1], -1.0)
    assert np.allclose(half.arrays()["returns"], [-0.25, -1.0])  # lambda 0: one-step targets


def test_league_weights_and_intervals() -> None:
    assert parse_weights("self=4,greedy=1", "--opponents") == {"self": 4.0, "greedy": 1.0}
    with pytest.raises(ValueError, match="name=weight"):
        parse_weights("self=x", "--opponents")
    with pytest.raises(ValueError, match="above 0"):
        parse_weights("self=0", "--opponents")
    low, high = wilson(36, 40)
    assert 0.76 < low < 0.77 and 0.96 < high < 0.97


def test_a_run_starts_from_the_network_init_names_and_refuses_one_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--init`` starts PPO from a weights file (here the shipped guide): the model begins with exactly
    its weights and takes its trunk's widths; a file that is no network is refused before any folder is
    made."""
    guide = network.load(network.GUIDE)
    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    model, widths = models.initial_model(str(network.GUIDE), [8], layout.size, space.size)
    assert widths == [int(w.shape[1]) for w, _ in guide.trunk]
    batch = np.random.default_rng(2).random((3, layout.size)).astype(np.float32)
    with torch.no_grad():
        logits, values = model(torch.from_numpy(batch))
    expected_logits, expected_values = guide.forward(batch)
    assert np.allclose(logits.numpy(), expected_logits, atol=1e-4)
    assert np.allclose(values.numpy(), expected_values, atol=1e-4)

    run = tmp_path / "run"
    command = ["run", "--smoke", "--no-progress", "--run", str(run), "--init", str(network.GUIDE)]
    assert main(command) == 0
    config = json.loads((run / "config.json").read_text())
    assert config["init"] == str(network.GUIDE) and config["hidden"] == widths

    missing = tmp_path / "missing"
    assert main(["run", "--smoke", "--run", str(missing), "--init", str(tmp_path / "none.npz")]) == 2
    assert "is not a weights file" in capsys.readouterr().err
    assert not missing.exists()
