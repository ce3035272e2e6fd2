"""The policy and value network in PyTorch for training, and back and forth to the NumPy network the bots
play (:mod:`kutnahora.learned.network`): build it, copy its weights out or in, save a run's network.
Needs the ``train`` extra (PyTorch, imported when a model is built).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kutnahora.learned import network


def build_model(inputs: int, hidden: Sequence[int], actions: int) -> Any:
    """The PyTorch twin of :class:`kutnahora.learned.network.PolicyValueNet`."""
    import torch
    from torch import nn

    class Model(nn.Module):  # type: ignore[misc,unused-ignore]  # nn.Module is Any without torch
        def __init__(self) -> None:
            super().__init__()
            widths = [inputs, *hidden]
            self.trunk = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))
            self.policy = nn.Linear(widths[-1], actions)
            self.value = nn.Linear(widths[-1], 1)
            nn.init.orthogonal_(self.policy.weight, 0.01)
            nn.init.zeros_(self.policy.bias)
            nn.init.orthogonal_(self.value.weight, 1.0)
            nn.init.zeros_(self.value.bias)

        def forward(self, x: Any) -> tuple[Any, Any]:
            layers: list[Any] = list(self.trunk)
            first, rest = layers[0], layers[1:]
            # Only the columns of the first layer at inputs that are non-zero somewhere in the batch: an
            # observation has about 170 non-zero entries of 3,886, so this is most of the work saved, in
            # the forward pass and the backward one alike (the other columns' gradients are zero anyway).
            used = x.abs().sum(0).nonzero().squeeze(1)
            x = torch.relu(x.index_select(1, used) @ first.weight.index_select(1, used).T + first.bias)
            for layer in rest:
                x = torch.relu(layer(x))
            return self.policy(x), torch.tanh(self.value(x)).squeeze(-1)

    return Model()


def to_numpy(model: Any, meta: dict[str, Any]) -> network.PolicyValueNet:
    """The model's weights as a NumPy network (weights transposed to (inputs, outputs))."""

    def layer(linear: Any) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        return (
            linear.weight.detach().cpu().numpy().T.astype(np.float32),
            linear.bias.detach().cpu().numpy().astype(np.float32),
        )

    return network.PolicyValueNet(
        [layer(lin) for lin in model.trunk], layer(model.policy), layer(model.value), dict(meta)
    )


def load_numpy(model: Any, net: network.PolicyValueNet) -> None:
    """Set the model's weights from a NumPy network of the same shape (the inverse of :func:`to_numpy`)."""
    import torch

    def fill(linear: Any, layer: tuple[network.Floats, network.Floats]) -> None:
        weight, bias = layer
        if tuple(linear.weight.shape) != (weight.shape[1], weight.shape[0]):
            raise ValueError(
                f"a layer of shape {tuple(weight.shape)} does not fit the model's "
                f"{tuple(linear.weight.shape[::-1])}"
            )
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.ascontiguousarray(weight.T, dtype=np.float32)))
            linear.bias.copy_(torch.from_numpy(np.asarray(bias, dtype=np.float32)))

    if len(model.trunk) != len(net.trunk):
        raise ValueError(f"the network has {len(net.trunk)} trunk layers, the model {len(model.trunk)}")
    for linear, layer in zip(model.trunk, net.trunk, strict=True):
        fill(linear, layer)
    fill(model.policy, net.policy)
    fill(model.value, net.value)


def save_network(net: network.PolicyValueNet, folder: Path, name: str) -> None:
    """Write a run's network as ``weights/NAME.npz`` and as ``latest.npz`` (replaced atomically: the
    export and a bot reading it never see half a file)."""
    network.save(net, folder / "weights" / f"{name}.npz")
    shutil.copyfile(folder / "weights" / f"{name}.npz", folder / "latest.npz.part")
    os.replace(folder / "latest.npz.part", folder / "latest.npz")


def initial_model(init: str, hidden: list[int], inputs: int, actions: int) -> tuple[Any, list[int]]:
    """The model to start from: a weights file, a run folder's checkpoint, or ``scratch`` (``hidden``);
    with its trunk's widths. ``ValueError`` says what is wrong."""
    import torch

    if init == "scratch":
        return build_model(inputs, hidden, actions), hidden
    path = Path(init)
    if path.is_dir():
        if not (path / "checkpoint.pt").exists() or not (path / "config.json").exists():
            raise ValueError(f"--init {init}: a run folder needs its checkpoint.pt and config.json")
        widths = [int(h) for h in json.loads((path / "config.json").read_text())["hidden"]]
        model = build_model(inputs, widths, actions)
        model.load_state_dict(torch.load(path / "checkpoint.pt", weights_only=False)["model"])
        return model, widths
    net = network.load(path)
    if net.inputs != inputs or net.actions != actions:
        raise ValueError(
            f"--init {init}: the network reads {net.inputs} inputs and gives {net.actions} actions; this "
            f"version's observations have {inputs} entries and {actions} actions"
        )
    widths = [int(w.shape[1]) for w, _ in net.trunk]
    model = build_model(inputs, widths, actions)
    load_numpy(model, net)
    return model, widths
