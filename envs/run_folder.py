"""A training run's folder and its records, shared by every ``kutnahora-train`` command: the ``--run`` and
``--resume`` options, whether a folder is free to hold a new run, the history and evaluations up to an
iteration (to resume), the learning curve, the commit the run was made at.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def git_commit() -> str:
    """The commit of the source tree this module is in (``unknown`` outside a checkout)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def draw_curve(
    history: list[dict[str, Any]],
    evaluations: list[dict[str, Any]],
    path: Path,
    series: str = "returns",
    ylabel: str = "mean return of training games\n(average of the last five iterations)",
    label: str = "against {}",
    limits: tuple[float, float] | None = (-1.05, 1.05),
    xlabel: str = "training samples (decisions of the learning seats)",
) -> None:
    """The learning curve: above, each iteration's ``series`` (by default the mean training return by
    opponent kind; a mapping per history entry), below, the evaluation win rates, by samples."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    kinds = sorted({k for h in history for k in h[series]})
    for kind in kinds:
        xs = [h["samples"] for h in history if kind in h[series]]
        ys = [h[series][kind] for h in history if kind in h[series]]
        ys = [float(np.mean(ys[max(0, i - 4) : i + 1])) for i in range(len(ys))]  # the last five
        top.plot(xs, ys, label=label.format(kind))
    top.set_ylabel(ylabel)
    if limits is not None:
        top.set_ylim(*limits)
    top.axhline(0, color="grey", lw=0.5)
    if kinds:
        top.legend(loc="lower right", fontsize=8)
    keys = sorted({(e["opponent"], e["players"], e["policy"]) for e in evaluations})
    for opponent, players, policy in keys:
        points = [
            e
            for e in evaluations
            if (e["opponent"], e["players"], e["policy"]) == (opponent, players, policy)
        ]
        bottom.plot(
            [e["samples"] for e in points],
            [e["win_rate"] for e in points],
            "o-" if policy == "deterministic" else "x--",
            label=f"{policy} vs {opponent}, {players} players",
        )
    bottom.set_ylabel("evaluation win rate")
    bottom.set_xlabel(xlabel)
    bottom.set_ylim(0, 1)
    if keys:
        bottom.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def occupied(folder: Path) -> bool:
    """Whether a new run may not start in ``folder`` because it holds files already; says so on stderr
    (a run is never started over another's files: ``--resume`` goes on with them)."""
    if folder.exists() and any(folder.iterdir()):
        print(
            f"kutnahora-train: {folder} is not empty; give a new --run folder, or --resume to go on",
            file=sys.stderr,
        )
        return True
    return False


def records_until(folder: Path, iteration: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A run folder's ``history.json`` and ``evaluations.json`` as far as ``iteration``, its checkpoint's.

    A checkpoint writes them before ``checkpoint.pt``, so a stop or a crash in between leaves them ahead of
    it, never behind: what they hold past the checkpoint's iteration is dropped, to be made again."""
    lists = []
    for name in ("history.json", "evaluations.json"):
        entries = json.loads((folder / name).read_text()) if (folder / name).exists() else []
        lists.append([entry for entry in entries if entry["iteration"] <= iteration])
    return lists[0], lists[1]


def add_run_arguments(
    parser: argparse.ArgumentParser, name: str, source: str, resumable: Sequence[str]
) -> None:
    """``--run`` (default ``kutnahora-runs/NAME``) and ``--resume`` (from ``source``, with the run's options
    except the ``resumable`` ones given again), as every training command takes them."""
    parser.add_argument("--run", type=Path, default=Path("kutnahora-runs") / name, help="run folder")
    parser.add_argument(
        "--resume",
        action="store_true",
        help=f"go on from {source}, with its options, except those given again of "
        + ", ".join("--" + k.replace("_", "-") for k in resumable),
    )
