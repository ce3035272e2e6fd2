"""A tournament game that is not on this game server, played again on it from its saved replay.

``kutnahora-tournament`` starts its own game server unless told otherwise, and that server is gone when
the tournament ends; what stays is each game's saved replay (``GetReplay`` as JSON: options, seed and
every decision). :func:`replay_onto` creates the same game on the game server this web server talks to
(same options and seed, no clock), takes every seat, and submits every recorded decision by its canonical
text, in order, through the public protocol. The rules being deterministic, the result is the same game,
which the game page then draws and scrubs like any other; the final state hash is compared with the
replay's, and a difference is reported rather than shown as the tournament's game.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from google.protobuf import json_format

from kutnahora.clients.sdk import Client, ClientError, InvalidChoice
from kutnahora.v1 import game_pb2, replay_service_pb2


class ReplayError(Exception):
    """The saved replay cannot be played again here; the message says why."""


def load(path: Path) -> replay_service_pb2.GetReplayResponse:
    """A saved replay file (``GetReplay`` as JSON)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ReplayError(f"cannot read the saved replay {path}: {error.strerror}") from None
    try:
        return json_format.Parse(text, replay_service_pb2.GetReplayResponse(), ignore_unknown_fields=True)
    except json_format.ParseError as error:
        raise ReplayError(f"{path} is not a saved replay ({error})") from None


async def replay_onto(client: Client, replay: replay_service_pb2.GetReplayResponse) -> str:
    """Play the replay's game again on ``client``'s server; returns the new game's id."""
    original = replay.game
    if original.status != game_pb2.GAME_STATUS_FINISHED:
        raise ReplayError(f"game {original.game_id} did not finish, so there is nothing to replay")
    options = original.options
    names = [seat.name or f"seat {seat.seat}" for seat in sorted(original.seats, key=lambda s: s.seat)]
    if len(names) != options.players:
        raise ReplayError(
            f"the replay of {original.game_id} lists {len(names)} seats for a {options.players}-player game"
        )
    created, seats = await client.create_seated_game(
        names,
        seed=replay.seed,
        events=options.events,
        clock=game_pb2.ClockSettings(disabled=True),
        label=f"replay of {original.game_id}",
        guild_setup_card=options.guild_setup_card if options.HasField("guild_setup_card") else None,
        mine_setup_card=options.mine_setup_card if options.HasField("mine_setup_card") else None,
    )
    game_id = created.game.game_id
    try:
        for record in replay.decisions:
            seat = seats[record.seat]
            observation = (await client.observe(game_id, seat)).observation
            if observation.version != record.version or observation.pending.seat != record.seat:
                raise ReplayError(
                    f"the replay of {original.game_id} went another way at decision {record.version} here"
                )
            await client.submit(seat, observation, record.text)
        again = await client.replay(game_id)
    except (ClientError, InvalidChoice, ReplayError) as error:
        await _abandon(client, game_id, created.game_token)
        if isinstance(error, ReplayError):
            raise
        raise ReplayError(
            f"the replay of {original.game_id} cannot be played on this game server ({error}); its rules "
            "or component set may differ from the tournament's"
        ) from None
    if replay.state_hash and again.state_hash != replay.state_hash:
        raise ReplayError(
            f"game {original.game_id} played again here ends in another state than the tournament's "
            "(its rules or component set differ)"
        )
    return game_id


async def _abandon(client: Client, game_id: str, token: str) -> None:
    with contextlib.suppress(ClientError):
        await client.abandon(game_id, token, "a replay that could not be played again")
