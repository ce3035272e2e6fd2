"""``kutnahora-train export``: a run's network (its latest, or an iteration's) copied into a weights file as
float16, with a record beside it of the commands, seed and commits that made it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from kutnahora.clients.files import write_json
from kutnahora.envs.run_folder import git_commit
from kutnahora.learned import network

WEIGHTS = network.WEIGHTS


def export_command(args: argparse.Namespace, command: str) -> int:
    """Copy a run's network (its latest, or ``--iteration``) into the weights file, with its record (the
    commands that trained and exported it, the run folder named relative to the folder holding it)."""
    folder: Path = args.run
    source = (
        folder / "latest.npz"
        if args.iteration is None
        else folder / "weights" / f"iter-{args.iteration:05d}.npz"
    )
    if not source.exists():
        print(f"kutnahora-train: {source} does not exist", file=sys.stderr)
        return 2
    net = network.load(source)
    config = json.loads((folder / "config.json").read_text()) if (folder / "config.json").exists() else {}
    target: Path = args.to
    network.save(net, target, np.float16)
    parent = str(folder.resolve().parent) + os.sep

    def relative(text: str) -> str:
        """A command as recorded: the run folder named from the folder that holds it (the rest of an
        absolute path says where one machine kept its runs, nothing about the network)."""
        return text.replace(parent, "")

    record = {
        "source": source.name,
        "iteration": net.meta.get("iteration"),
        "samples": net.meta.get("samples"),
        "hidden": net.meta.get("hidden"),
        "trained_by": [relative(c) for c in config.get("commands", [])],
        "trained_at_commit": config.get("commit"),
        "training_seed": config.get("seed"),
        "exported_by": relative(command),
        "exported_at_commit": git_commit(),
        "exported": datetime.now(UTC).isoformat(timespec="seconds"),
        "bytes": target.stat().st_size,
    }
    write_json(target.with_suffix(".json"), record)
    print(
        f"{source} → {target} ({record['bytes']:,} bytes; iteration {record['iteration']}, "
        f"{record['samples']:,} samples)"
    )
    return 0


def add_export_parser(commands: Any) -> None:
    """``kutnahora-train export``: its options."""
    exporter = commands.add_parser(
        "export",
        help="copy a run's network into the bot's weights file",
        description="Copy a run's latest network (or --iteration's) to the weights file, as float16, with a "
        "JSON record beside it of the commit and commands that made it.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    exporter.add_argument("run", type=Path, help="run folder")
    exporter.add_argument("--iteration", type=int, help="an exported iteration instead of the latest")
    exporter.add_argument("--to", type=Path, default=WEIGHTS, help="the weights file to write")
