"""The seat gateway's flags (kutnahora.hosting.gateway_flags): ``kutnahora-tournament`` and
``kutnahora-arena-worker`` take the same ones, with the same help, and build the same
:class:`GatewayLimits` from them; the tournament hands them to its runner."""

from __future__ import annotations

import argparse

from rich.console import Console

from kutnahora.clients.tournament.cli import Tournament
from kutnahora.clients.tournament.cli import build_parser as tournament_parser
from kutnahora.hosting.gateway_flags import gateway_limits_of
from kutnahora.hosting.gateway_limits import MIB, GatewayLimits
from kutnahora.worker.options import build_parser as worker_parser

FLAGS = [
    *("--gateway-connections", "3", "--gateway-calls", "5", "--gateway-bytes", "2"),
    *("--gateway-message", "64", "--gateway-rate", "7.5", "--gateway-burst", "9", "--gateway-cpu", "0.1"),
]
GIVEN = GatewayLimits(
    connections=3,
    calls=5,
    bytes_in_flight=2 * MIB,
    message_bytes=64 << 10,
    rate=7.5,
    burst=9,
    cpu_share=0.1,
)
WORKER = ["--worker-token-file", "token"]


def gateway_helps(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    return {
        option: action.help
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--gateway-")
    }


def test_both_commands_take_the_same_gateway_flags_with_the_same_help() -> None:
    tournament = gateway_helps(tournament_parser())
    assert tournament == gateway_helps(worker_parser())
    assert sorted(tournament) == sorted(FLAGS[0::2])


def test_both_commands_build_the_same_limits_from_them() -> None:
    assert gateway_limits_of(tournament_parser().parse_args(FLAGS)) == GIVEN
    assert gateway_limits_of(worker_parser().parse_args([*WORKER, *FLAGS])) == GIVEN


def test_without_them_both_commands_keep_the_defaults() -> None:
    assert gateway_limits_of(tournament_parser().parse_args([])) == GatewayLimits()
    assert gateway_limits_of(worker_parser().parse_args(WORKER)) == GatewayLimits()


def test_the_tournament_hands_them_to_its_runner() -> None:
    args = tournament_parser().parse_args(["--bots", "random,greedy", "--games", "1", *FLAGS])
    console = Console(quiet=True)
    assert Tournament(args, console, console)._runner_config().gateway == GIVEN
