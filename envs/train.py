"""``kutnahora-train``'s command line: PPO (``run``, :mod:`kutnahora.envs.training`), expert iteration
(``distill``, :mod:`kutnahora.envs.distill`), both from scratch in one command (``pipeline``,
:mod:`kutnahora.envs.pipeline`) and ``export`` (:mod:`kutnahora.envs.export`); ``python -m
kutnahora.envs.train`` is the same command.

It sits above the three stages, which never import it: each stage's module declares its own options
(``add_parser``) and runs them (``command``). Ctrl-C and SIGTERM stop every command alike, with a sentence
saying what the run folder keeps and exit status 130. Needs the ``train`` extra.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from kutnahora.clients.stopping import INTERRUPTED, terminate_as_interrupt
from kutnahora.envs import distill, export, pipeline, training


def main(argv: Sequence[str] | None = None) -> int:
    """``kutnahora-train``: train the policy and value network, or export a run's network."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-train",
        description="Train the neural bot's policy and value network by PPO in self-play against a league "
        "(run) or by expert iteration from searches (distill), both from scratch in one command "
        "(pipeline), or export a run's network to the bot's weights file.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    training.add_parser(commands, stamp)
    distill.add_parser(commands, stamp)
    pipeline.add_parser(commands, stamp)
    export.add_export_parser(commands)
    args = parser.parse_args(argv)
    words = sys.argv[1:] if argv is None else list(argv)
    command = "kutnahora-train " + shlex.join(words)
    if args.command == "export":
        return export.export_command(args, command)
    with terminate_as_interrupt():
        try:
            if args.command == "distill":
                return distill.command(args, command, words)
            if args.command == "pipeline":
                return pipeline.command(args, command, main)
            return training.command(args, command, words)
        except KeyboardInterrupt:
            kept = (
                "the stages done and the one under way's last checkpoint"
                if args.command == "pipeline"
                else "its last checkpoint"
            )
            print(f"kutnahora-train: stopped; {args.run} keeps {kept}, --resume goes on", file=sys.stderr)
            return INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
