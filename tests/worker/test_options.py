"""The command lines of ``kutnahora-arena-worker`` and ``kutnahora-bot submit|submissions|hosting``: help
on every option, every default shown once, the sandbox's limits as given."""

from __future__ import annotations

import argparse

import pytest

from kutnahora.clients.bots.hosted import build_hosting_parser, build_submissions_parser, build_submit_parser
from kutnahora.hosting.limit_flags import limits_of
from kutnahora.hosting.sandbox import MIB
from kutnahora.worker.main import main
from kutnahora.worker.options import build_parser

PARSERS = [build_parser, build_submit_parser, build_submissions_parser, build_hosting_parser]


@pytest.mark.parametrize("build", PARSERS)
def test_every_option_has_help_and_shows_its_default_once(build: object) -> None:
    assert callable(build)
    parser: argparse.ArgumentParser = build()
    formatter = parser._get_formatter()
    for action in parser._actions:
        assert action.help, f"{action.option_strings or action.dest} has no help"
        if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
            continue
        described = formatter._expand_help(action)
        assert described.count("default") == 1, f"{action.option_strings}: {described}"
        assert str(action.default) in described, described


def test_the_limits_are_the_ones_given() -> None:
    args = build_parser().parse_args(
        [
            "--worker-token-file",
            "t",
            "--bot-memory",
            "300",
            "--bot-cpu",
            "7",
            "--bot-log",
            "64",
            "--bot-tmp",
            "8",
        ]
    )
    limits = limits_of(args)
    assert (limits.memory_bytes, limits.cpu_seconds) == (300 * MIB, 7)
    assert (limits.log_bytes, limits.tmp_bytes) == (64 << 10, 8 * MIB)


def test_no_slot_at_all_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--worker-token-file", "t", "--seats", "0", "--builds", "0"]) == 2
    assert "--seats and --builds" in capsys.readouterr().err
