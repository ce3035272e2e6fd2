"""Clocks: a decision time plus a time bank per seat; then the default decision, strikes, and the policy."""

from __future__ import annotations

import asyncio

from google.protobuf import duration_pb2

from kutnahora.engine.components import Action
from kutnahora.engine.options import ChooseTile, PlayCard, Skip
from kutnahora.server.clock import default_option, policy_option
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2, replay_service_pb2
from tests.server.conftest import Client, bearer


def ms(milliseconds: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=milliseconds // 1000, nanos=(milliseconds % 1000) * 1_000_000)


def test_the_default_decision_is_skip_then_no_effect_then_the_first() -> None:
    assert default_option([ChooseTile(3), Skip(), ChooseTile(4)]) == Skip()
    assert default_option([PlayCard(1, None), PlayCard(2, None)]) == PlayCard(1, None)
    assert default_option([PlayCard(1, Action.MINE), PlayCard(1, None)]) == PlayCard(1, None)
    assert default_option([ChooseTile(9), ChooseTile(2)]) == ChooseTile(9)
    options = [ChooseTile(n) for n in range(10)]
    assert policy_option(5, 7, options) == policy_option(5, 7, options)


async def wait_for(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_silent_seats_time_out_strike_out_and_the_game_still_ends(client: Client) -> None:
    game_id, _, _ = await client.new_game(
        players=2, seed=21, decision_time=ms(30), time_bank=ms(20), max_strikes=2
    )

    async def finished() -> bool:
        game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
        return game.status == game_pb2.GAME_STATUS_FINISHED

    await wait_for(finished, timeout=20)
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    for seat in game.seats:
        assert seat.strikes == 2
        assert seat.replaced
        assert not seat.resigned
        assert seat.time_bank_left.ToMilliseconds() == 0
    replay = await client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id))
    sources = [record.source for record in replay.decisions]
    assert sources[:4] == [game_pb2.DECISION_SOURCE_TIMEOUT] * 4
    assert set(sources[4:]) == {game_pb2.DECISION_SOURCE_POLICY}
    # The first timeout waited for the decision time plus the whole bank.
    assert replay.decisions[0].think_time.ToMilliseconds() >= 50


async def test_a_seat_that_answers_in_time_keeps_its_bank(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=22, decision_time=ms(2000), time_bank=ms(5000))
    observation = await client.observe(game_id)
    seat = observation.pending.seat
    response = await client.play.GetObservation(
        play_service_pb2.GetObservationRequest(game_id=game_id, seat=seat), metadata=bearer(tokens[seat])
    )
    assert response.clock.seat == seat
    assert response.clock.decision_time.ToMilliseconds() == 2000
    assert response.clock.time_bank_left.ToMilliseconds() == 5000
    assert response.clock.deadline.ToMilliseconds() > 0
    await client.submit(game_id, seat, tokens[seat], 0, option_index=0)
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert game.seats[seat].strikes == 0
    assert game.seats[seat].time_bank_left.ToMilliseconds() == 5000


async def test_the_play_stream_reports_the_clock_and_a_timeout_moves_on(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(
        players=2, seed=23, decision_time=ms(60), time_bank=ms(0), max_strikes=5
    )
    seat = (await client.observe(game_id)).pending.seat
    call = client.play.Play(metadata=bearer(tokens[seat]))
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    first = await call.read()
    assert first.your_turn.clock.seat == seat
    assert first.your_turn.observation.version == 0

    # Stay silent: the server applies the default decision and the game moves on without this seat.
    async def moved() -> bool:
        return (await client.observe(game_id)).version >= 1

    await wait_for(moved)
    call.cancel()
    replay_game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert replay_game.seats[seat].strikes >= 1


async def test_no_clock_means_no_timeout(client: Client) -> None:
    game_id, _, _ = await client.new_game(players=2, seed=24, disabled=True)
    await asyncio.sleep(0.2)
    assert (await client.observe(game_id)).version == 0
    response = await client.play.GetObservation(play_service_pb2.GetObservationRequest(game_id=game_id))
    assert not response.HasField("clock")
