"""The command-line flags of the seat gateway's bounds, shared by ``kutnahora-tournament`` and
``kutnahora-arena-worker``: one set of names, help texts and defaults
(:class:`~kutnahora.hosting.gateway_limits.GatewayLimits`), and the :class:`GatewayLimits` they set.
Both commands host bots behind seat gateways of their own and charge each bot's calls to its
:class:`~kutnahora.hosting.gateway_limits.BotBudget`, so every bound applies to both."""

from __future__ import annotations

import argparse
from typing import Any

from kutnahora.hosting.gateway_limits import MIB, GatewayLimits


def add_gateway_arguments(group: Any) -> None:
    """Add ``--gateway-connections`` … ``--gateway-cpu`` to ``group`` (a parser or an argument group)."""
    default = GatewayLimits()
    group.add_argument(
        "--gateway-connections",
        type=int,
        default=default.connections,
        help="connections one seat's bot may hold to its seat gateway (default %(default)s)",
    )
    group.add_argument(
        "--gateway-calls",
        type=int,
        default=default.calls,
        help="calls one bot may have in flight through its gateways, all its seats together "
        "(default %(default)s)",
    )
    group.add_argument(
        "--gateway-bytes",
        type=int,
        default=default.bytes_in_flight // MIB,
        help="MiB of requests and answers the gateways may hold for one bot at once (default %(default)s)",
    )
    group.add_argument(
        "--gateway-message",
        type=int,
        default=default.message_bytes >> 10,
        help="largest message in KiB a bot may send, never more than the server accepts "
        "(default %(default)s)",
    )
    group.add_argument(
        "--gateway-rate",
        type=float,
        default=default.rate,
        help="calls and Play messages per second one bot may make through its gateways; an accepted "
        "decision and a turn are not counted (default %(default)s)",
    )
    group.add_argument(
        "--gateway-burst",
        type=int,
        default=default.burst,
        help="calls one bot may make at once above --gateway-rate (default %(default)s)",
    )
    group.add_argument(
        "--gateway-cpu",
        type=float,
        default=default.cpu_share,
        help="share of one core of this process (the tournament runner or the worker) one bot's calls "
        "may use; past it they wait (default %(default)s)",
    )


def gateway_limits_of(args: argparse.Namespace) -> GatewayLimits:
    """The seat gateways' bounds the flags of :func:`add_gateway_arguments` set (the others at their
    defaults)."""
    return GatewayLimits(
        connections=args.gateway_connections,
        calls=args.gateway_calls,
        bytes_in_flight=args.gateway_bytes * MIB,
        message_bytes=args.gateway_message << 10,
        rate=args.gateway_rate,
        burst=args.gateway_burst,
        cpu_share=args.gateway_cpu,
    )
