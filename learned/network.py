"""The policy and value network at play time, in NumPy alone: its weights file, its forward pass.

The network reads a seat's normalised observation vector
(:class:`~kutnahora.learned.encoding.ObservationLayout`, ``normalized=True``) and gives two things: a
**policy**, one logit per id of the fixed action space (:class:`~kutnahora.learned.actions.ActionSpace`),
of which only the legal ids count, and a **value**, the seat's expected terminal return
(:func:`kutnahora.learned.outcome.returns`, in [−1, 1]). One network serves 2, 3 and 4 players: the
number of players is part of the observation.

Its shape is a shared trunk of fully connected layers with ReLU, then a linear policy head and a linear
value head squashed by ``tanh``::

    observation (3886) → 256 → 128 ─┬→ policy logits (240)
                                     └→ tanh → value

A **weights file** is a NumPy ``.npz`` archive: ``trunk.0.weight``, ``trunk.0.bias``, ``trunk.1.weight``
… (each weight stored as (inputs, outputs)), ``policy.weight``, ``policy.bias``, ``value.weight``,
``value.bias``, in ``float16`` or ``float32`` (computed in ``float32`` either way), and ``meta``, a JSON
text with the observation and action sizes. :func:`save` writes one, :func:`load` reads one. Nothing here
imports a deep-learning library, so a bot that plays with the network needs NumPy only; training
(:mod:`kutnahora.envs.training`, :mod:`kutnahora.envs.export`) writes these files from its PyTorch model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

FORMAT = 1
"""The version of the weights file's layout."""

WEIGHTS = Path(__file__).resolve().parent / "weights" / "neural.npz"
"""The weights file the ``neural`` bot plays with (with ``neural.json`` beside it: how it was made)."""

GUIDE = WEIGHTS.with_name("guide.npz")
"""The weights file whose policy picks the options the ``neural-mcts`` bot searches (``guide.json``
beside it): a network fitted to the search bot's own visit counts (``kutnahora-train distill``)."""

Floats = npt.NDArray[np.float32]


@dataclass
class PolicyValueNet:
    """A trunk of (weight, bias) layers with ReLU, a policy head and a value head."""

    trunk: list[tuple[Floats, Floats]]
    policy: tuple[Floats, Floats]
    value: tuple[Floats, Floats]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> int:
        """The length of the observation vector the network reads."""
        return int(self.trunk[0][0].shape[0])

    @property
    def actions(self) -> int:
        """The number of action ids the policy covers."""
        return int(self.policy[0].shape[1])

    def forward(self, observations: npt.ArrayLike) -> tuple[Floats, Floats]:
        """Logits (rows × actions) and values (rows) for a batch of observation vectors (or one vector,
        read as a batch of one)."""
        h = np.asarray(observations, dtype=np.float32)
        if h.ndim == 1:
            h = h[None, :]
        if h.shape[1] != self.inputs:
            raise ValueError(f"the network reads vectors of {self.inputs} entries, not {h.shape[1]}")
        for depth, (weight, bias) in enumerate(self.trunk):
            if depth == 0:
                # An observation has a few hundred non-zero entries out of thousands: multiplying only
                # those rows of the first weight reads a twentieth of it (ten times faster, measured).
                used = np.flatnonzero(h.any(axis=0))
                h = h[:, used] @ weight[used]
            else:
                h = h @ weight
            h += bias
            np.maximum(h, 0.0, out=h)
        logits = h @ self.policy[0] + self.policy[1]
        values = np.tanh(h @ self.value[0] + self.value[1])[:, 0]
        return logits, values

    def policy_value(self, observation: Floats, legal_ids: list[int]) -> tuple[Floats, float]:
        """The policy's probabilities over ``legal_ids`` (in their order) and the value, for one vector."""
        logits, values = self.forward(observation)
        return softmax(logits[0, legal_ids]), float(values[0])


def softmax(logits: Floats) -> Floats:
    """Probabilities from logits (stable for large ones)."""
    shifted = np.exp(logits - logits.max())
    out: Floats = (shifted / shifted.sum()).astype(np.float32)
    return out


def save(net: PolicyValueNet, path: Path, dtype: type = np.float16) -> None:
    """Write ``net`` to a weights file (``dtype``: float16, the default, halves the size)."""
    arrays: dict[str, Any] = {}
    for i, (weight, bias) in enumerate(net.trunk):
        arrays[f"trunk.{i}.weight"] = weight.astype(dtype)
        arrays[f"trunk.{i}.bias"] = bias.astype(dtype)
    for name, (weight, bias) in (("policy", net.policy), ("value", net.value)):
        arrays[f"{name}.weight"] = weight.astype(dtype)
        arrays[f"{name}.bias"] = bias.astype(dtype)
    meta = {"format": FORMAT, "inputs": net.inputs, "actions": net.actions, **net.meta}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        np.savez_compressed(out, **arrays)


def load(path: Path) -> PolicyValueNet:
    """Read a weights file; ``ValueError`` says what is wrong with one that is not."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            files = dict(archive.items())
    except (OSError, ValueError) as error:
        raise ValueError(f"{path} is not a weights file: {error}") from None
    try:
        meta = json.loads(str(files.pop("meta")))
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, this version reads format {FORMAT}")
        trunk = []
        i = 0
        while f"trunk.{i}.weight" in files:
            trunk.append(_layer(files, f"trunk.{i}"))
            i += 1
        net = PolicyValueNet(trunk, _layer(files, "policy"), _layer(files, "value"), meta)
        if not trunk:
            raise ValueError("the trunk has no layer")
        width = net.inputs
        for weight, bias in trunk:
            _check(weight, bias, width)
            width = weight.shape[1]
        _check(*net.policy, width)
        _check(*net.value, width)
        if net.value[0].shape[1] != 1:
            raise ValueError("the value head must have one output")
    except (KeyError, ValueError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a usable weights file: {error}") from None
    return net


def _layer(files: dict[str, Any], name: str) -> tuple[Floats, Floats]:
    return (
        np.ascontiguousarray(files[f"{name}.weight"], dtype=np.float32),
        np.ascontiguousarray(files[f"{name}.bias"], dtype=np.float32),
    )


def _check(weight: Floats, bias: Floats, width: int) -> None:
    if weight.ndim != 2 or weight.shape[0] != width or bias.shape != (weight.shape[1],):
        raise ValueError(f"a layer of shape {weight.shape} does not follow one of {width} outputs")
