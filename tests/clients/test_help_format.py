"""``kutnahora-play --help`` and ``kutnahora-web --help`` show every default, once."""

from __future__ import annotations

import argparse

import pytest

from kutnahora.clients.human import build_parser as play_parser
from kutnahora.web.cli import build_parser as web_parser


@pytest.mark.parametrize("build", [play_parser, web_parser])
def test_every_option_with_a_default_shows_it_once(build: object) -> None:
    assert callable(build)
    parser: argparse.ArgumentParser = build()
    formatter = parser._get_formatter()
    shown = 0
    for action in parser._actions:
        if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
            continue
        described = formatter._expand_help(action)
        assert described.count("default") == 1, f"{action.option_strings}: {described}"
        assert str(action.default) in described, described
        shown += 1
    assert shown >= 3
    assert "(default: localhost:50051)" in " ".join(parser.format_help().split())
