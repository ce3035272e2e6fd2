"""Expert iteration's searched games on disk: one shard a game, ``data/game-NNNNNNN.npz``, written at once and
atomically when the game ends (observation vectors stored sparse: an observation has about 170 non-zero
entries of 3,886), so a crash loses only the games under way and ``--resume`` plays the games without one.
:class:`Samples` is what a shard holds: per decision, the observation, the legal-action mask, the
search's visit distribution, the seat's return and the search's value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass
class Samples:
    """Samples as arrays: the observation vectors in sparse rows (``indptr``, ``indices``, ``values``),
    the legal-action masks, the target policies, the returns, the searches' values of the positions
    (:meth:`Searcher.visits`) and the seats that decided."""

    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int16]
    values: npt.NDArray[np.float32]
    masks: npt.NDArray[np.bool_]
    targets: npt.NDArray[np.float32]
    returns: npt.NDArray[np.float32]
    seats: npt.NDArray[np.int8]
    searched: npt.NDArray[np.float32]

    def __len__(self) -> int:
        return len(self.returns)

    @classmethod
    def from_rows(
        cls,
        vectors: Sequence[npt.NDArray[np.float32]],
        masks: Sequence[npt.NDArray[np.bool_]],
        targets: Sequence[npt.NDArray[np.float32]],
        outcome: Sequence[float],
        seats: Sequence[int],
        actions: int,
        searched: Sequence[float] | None = None,
    ) -> Samples:
        """Samples from dense rows (``searched`` defaults to the returns)."""
        nonzero = [np.flatnonzero(v) for v in vectors]
        indptr = np.zeros(len(vectors) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(n) for n in nonzero])
        return cls(
            indptr,
            np.concatenate([*nonzero, np.zeros(0, np.int64)]).astype(np.int16),
            np.concatenate(
                [*(v[n] for v, n in zip(vectors, nonzero, strict=True)), np.zeros(0, np.float32)]
            ).astype(np.float32),
            np.stack(masks) if masks else np.zeros((0, actions), bool),
            np.stack(targets) if targets else np.zeros((0, actions), np.float32),
            np.asarray(outcome, dtype=np.float32),
            np.asarray(seats, dtype=np.int8),
            np.asarray(outcome if searched is None else searched, dtype=np.float32),
        )

    @classmethod
    def join(cls, parts: Sequence[Samples], actions: int) -> Samples:
        """One set of samples from several, in order."""
        if not parts:
            return cls.from_rows([], [], [], [], [], actions)
        offsets = np.cumsum([0, *(len(p.values) for p in parts[:-1])])
        return cls(
            np.concatenate(
                [np.zeros(1, np.int64), *(p.indptr[1:] + o for p, o in zip(parts, offsets, strict=True))]
            ),
            np.concatenate([p.indices for p in parts]),
            np.concatenate([p.values for p in parts]),
            np.concatenate([p.masks for p in parts]),
            np.concatenate([p.targets for p in parts]),
            np.concatenate([p.returns for p in parts]),
            np.concatenate([p.seats for p in parts]),
            np.concatenate([p.searched for p in parts]),
        )

    def tail(self, count: int) -> Samples:
        """The last ``count`` samples."""
        first = max(0, len(self) - count)
        start = int(self.indptr[first])
        return Samples(
            self.indptr[first:] - start,
            self.indices[start:],
            self.values[start:],
            self.masks[first:],
            self.targets[first:],
            self.returns[first:],
            self.seats[first:],
            self.searched[first:],
        )

    def vectors(self, rows: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.float32]:
        """The observation vectors of ``rows``, dense (rows × size)."""
        out = np.zeros((len(rows), size), dtype=np.float32)
        for i, row in enumerate(rows):
            start, end = self.indptr[row], self.indptr[row + 1]
            out[i, self.indices[start:end]] = self.values[start:end]
        return out


def shard_path(data: Path, game: int) -> Path:
    """The shard of game number ``game``."""
    return data / f"game-{game:07d}.npz"


def shard_games(data: Path) -> list[int]:
    """The numbers of the games that have a shard, in order."""
    return sorted(int(p.stem.split("-")[1]) for p in data.glob("game-*.npz"))


def write_shard(data: Path, game: int, samples: Samples, meta: dict[str, Any]) -> Path:
    """Write one game's samples atomically (a crash leaves the shard whole or absent, never half)."""
    path = shard_path(data, game)
    partial = path.with_suffix(".npz.part")
    data.mkdir(parents=True, exist_ok=True)
    with partial.open("wb") as out:
        np.savez_compressed(
            out,
            indptr=samples.indptr,
            indices=samples.indices,
            values=samples.values,
            masks=samples.masks,
            targets=samples.targets,
            returns=samples.returns,
            seats=samples.seats,
            searched=samples.searched,
            meta=np.array(json.dumps({"game": game, **meta}, sort_keys=True)),
        )
    partial.replace(path)
    return path


def read_shard(path: Path) -> Samples:
    """One game's samples, as written (a shard written before searches' values were kept reads its
    returns in their place)."""
    with np.load(path, allow_pickle=False) as archive:
        return Samples(
            archive["indptr"],
            archive["indices"],
            archive["values"],
            archive["masks"],
            archive["targets"],
            archive["returns"],
            archive["seats"],
            archive["searched"] if "searched" in archive.files else archive["returns"],
        )


def shard_size(path: Path) -> int:
    """How many samples a shard holds (reads only its returns)."""
    with np.load(path, allow_pickle=False) as archive:
        return len(archive["returns"])
