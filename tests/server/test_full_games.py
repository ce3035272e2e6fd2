"""Whole games played through the protocol, for two, three and four seats, checked against the engine."""

from __future__ import annotations

import asyncio
import random

import grpc
import grpc.aio
import pytest

from kutnahora import engine
from kutnahora.engine import GameOptions, parse_option
from kutnahora.server.config import ServerConfig
from kutnahora.v1 import game_pb2, game_service_pb2, replay_service_pb2
from tests.server.conftest import NO_CLOCK, Client, StartServer, bearer, play_game, play_random


async def check_against_engine(client: Client, game_id: str, players: int, seed: int) -> None:
    """The replay rebuilds, with the engine, exactly the state the server reached."""
    replay = await client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id))
    assert replay.seed == seed
    assert replay.game.status == game_pb2.GAME_STATUS_FINISHED
    decisions = [parse_option(record.text) for record in replay.decisions]
    assert [record.version for record in replay.decisions] == list(range(len(decisions)))
    # Each record says what it answered: the replayed decision kinds, in order.
    replayed = engine.new_game(GameOptions(players=players), seed)
    for record, option in zip(replay.decisions, decisions, strict=True):
        assert replayed.pending is not None
        assert record.kind == game_pb2.DecisionKind.Value(f"DECISION_KIND_{replayed.pending.kind.name}")
        engine.apply(replayed, option)
    state = engine.replay(GameOptions(players=players), seed, decisions)
    assert state.over
    assert engine.state_hash(replayed) == engine.state_hash(state)
    assert replay.state_hash == engine.state_hash(state)
    result = engine.result(state)
    assert result is not None
    assert [s.score for s in replay.game.result.seats] == list(result.scores)
    assert list(replay.game.result.winners) == list(result.winners)


@pytest.mark.parametrize("players", [2, 3, 4])
async def test_a_full_game_over_play_streams(client: Client, players: int) -> None:
    seed = 100 + players
    game_id, tokens, _ = await client.new_game(players=players, seed=seed)
    endings = await play_game(client, game_id, tokens, seed=players)
    assert len(endings) == players
    for ended in endings:
        assert ended.status == game_pb2.GAME_STATUS_FINISHED
        assert ended.observation.over
        assert len(ended.result.seats) == players
    assert len({ended.result.SerializeToString() for ended in endings}) == 1
    await check_against_engine(client, game_id, players, seed)
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    assert not game.HasField("pending_seat")


async def test_a_full_game_over_unary_calls_with_payloads_and_texts(client: Client) -> None:
    seed = 77
    game_id, tokens, _ = await client.new_game(players=2, seed=seed)
    rng = random.Random(5)
    turns = 0
    while True:
        spectator = await client.observe(game_id)
        if spectator.over:
            break
        seat = spectator.pending.seat
        observation = await client.observe(game_id, seat, tokens[seat])
        option = rng.choice(list(observation.pending.options))
        style = turns % 3
        if style == 0:
            response = await client.submit(
                game_id, seat, tokens[seat], observation.version, option_index=option.index
            )
        elif style == 1:
            response = await client.submit(
                game_id, seat, tokens[seat], observation.version, decision=option.decision
            )
        else:
            response = await client.submit(
                game_id, seat, tokens[seat], observation.version, option_text=option.text
            )
        assert response.version == observation.version + 1
        assert response.decision.version == observation.version
        assert response.decision.text == option.text
        assert response.decision.source == game_pb2.DECISION_SOURCE_SEAT
        turns += 1
    assert turns == spectator.version
    await check_against_engine(client, game_id, 2, seed)


async def test_a_full_game_on_the_sqlite_store(start_server: StartServer, tmp_path: object) -> None:
    _, client = await start_server(ServerConfig.in_memory(db=f"{tmp_path}/games.db", clock=NO_CLOCK))
    game_id, tokens, _ = await client.new_game(players=3, seed=9)
    await play_game(client, game_id, tokens, seed=3)
    await check_against_engine(client, game_id, 3, 9)


async def test_many_games_at_once(client: Client) -> None:
    games = [await client.new_game(players=2 + i % 3, seed=i) for i in range(6)]
    await asyncio.gather(
        *(play_game(client, game_id, tokens, seed=i) for i, (game_id, tokens, _) in enumerate(games))
    )
    for i, (game_id, _, _) in enumerate(games):
        await check_against_engine(client, game_id, 2 + i % 3, i)


async def test_the_observation_lists_options_only_for_the_seat_that_owes_them(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=3, seed=4)
    spectator = await client.observe(game_id)
    owner = spectator.pending.seat
    assert not spectator.HasField("viewer")
    assert len(spectator.pending.options) == 0
    for seat, token in tokens.items():
        observation = await client.observe(game_id, seat, token)
        assert observation.viewer == seat
        if seat == owner:
            assert len(observation.pending.options) > 0
            assert [o.index for o in observation.pending.options] == list(
                range(len(observation.pending.options))
            )
            assert all(o.text and o.description for o in observation.pending.options)
            assert observation.pending.question
        else:
            assert len(observation.pending.options) == 0


async def test_join_picks_the_lowest_free_seat_and_the_game_starts_when_full(client: Client) -> None:
    created = await client.games.CreateGame(
        game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2), seed=3)
    )
    assert created.game.status == game_pb2.GAME_STATUS_WAITING
    assert created.game_token
    first = await client.games.JoinGame(
        game_service_pb2.JoinGameRequest(game_id=created.game.game_id, name="a")
    )
    assert first.seat == 0
    assert first.game.status == game_pb2.GAME_STATUS_WAITING
    second = await client.games.JoinGame(
        game_service_pb2.JoinGameRequest(game_id=created.game.game_id, name="b")
    )
    assert second.seat == 1
    assert second.game.status == game_pb2.GAME_STATUS_ACTIVE
    assert [s.name for s in second.game.seats] == ["a", "b"]
    assert first.seat_token != second.seat_token
    observation = await client.observe(created.game.game_id, 0, first.seat_token)
    assert observation.version == 0


async def test_a_game_created_with_its_seats_named_starts_at_once_and_survives_a_restart(
    start_server: StartServer, tmp_path: object
) -> None:
    config = ServerConfig.in_memory(db=f"{tmp_path}/games.db", clock=NO_CLOCK)
    server, client = await start_server(config)
    created = await client.games.CreateGame(
        game_service_pb2.CreateGameRequest(
            options=game_pb2.GameOptions(players=3), seed=12, seat_names=["ann", "bob", "cy"]
        )
    )
    game_id = created.game.game_id
    assert created.game.status == game_pb2.GAME_STATUS_ACTIVE
    assert [(s.seat, s.name, s.joined) for s in created.game.seats] == [
        (0, "ann", True),
        (1, "bob", True),
        (2, "cy", True),
    ]
    tokens = dict(enumerate(created.seat_tokens))
    assert len(set(tokens.values())) == 3 and created.game_token not in tokens.values()
    # Every seat is taken: nobody can join, and each token proves its own seat only.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, name="late"))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.observe(game_id, 1, tokens[0])
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    first = await client.observe(game_id, 0, tokens[0])
    assert first.version == 0 and first.viewer == 0

    # The seats were stored with the game: a new server on the same file knows them and their tokens.
    await server.stop(0.5)
    _, client = await start_server(config)
    reloaded = await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))
    assert reloaded.game.status == game_pb2.GAME_STATUS_ACTIVE
    assert [s.name for s in reloaded.game.seats] == ["ann", "bob", "cy"]
    await play_game(client, game_id, tokens, seed=4)
    await check_against_engine(client, game_id, 3, 12)


async def test_list_games_pages_newest_first_and_filters(client: Client) -> None:
    ids = []
    for i in range(5):
        created = await client.games.CreateGame(
            game_service_pb2.CreateGameRequest(
                options=game_pb2.GameOptions(players=2), seed=i, label="cup" if i % 2 else "other"
            )
        )
        ids.append(created.game.game_id)
    page = await client.games.ListGames(game_service_pb2.ListGamesRequest(page_size=2))
    assert [g.game_id for g in page.games] == ids[::-1][:2]
    assert page.next_page_token
    rest = await client.games.ListGames(
        game_service_pb2.ListGamesRequest(page_size=10, page_token=page.next_page_token)
    )
    assert [g.game_id for g in rest.games] == ids[::-1][2:]
    assert not rest.next_page_token
    cup = await client.games.ListGames(game_service_pb2.ListGamesRequest(label="cup"))
    assert {g.game_id for g in cup.games} == {ids[1], ids[3]}
    waiting = await client.games.ListGames(
        game_service_pb2.ListGamesRequest(status=game_pb2.GAME_STATUS_WAITING)
    )
    assert len(waiting.games) == 5
    active = await client.games.ListGames(
        game_service_pb2.ListGamesRequest(status=game_pb2.GAME_STATUS_ACTIVE)
    )
    assert len(active.games) == 0


async def test_components_come_over_the_wire(client: Client) -> None:
    response = await client.games.GetComponents(game_service_pb2.GetComponentsRequest())
    components = engine.default_components()
    assert response.rules_version == engine.RULES_VERSION
    assert len(response.components.buildings) == len(components.buildings)
    assert [b.name for b in response.components.buildings] == [b.name for b in components.buildings]
    assert [b.wood_cost for b in response.components.buildings] == [b.wood_cost for b in components.buildings]
    assert len(response.components.mine_tiles) == len(components.mine_tiles)
    assert len(response.components.population_deck.cards) == len(components.population_deck.cards)
    assert {b.name for b in response.components.city_boards} == set(components.city_boards)


async def test_resigned_seat_is_played_by_the_policy(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=12)
    resigned = await client.games.ResignSeat(
        game_service_pb2.ResignSeatRequest(game_id=game_id, seat=1), metadata=bearer(tokens[1])
    )
    assert resigned.game.seats[1].resigned
    assert resigned.game.seats[1].replaced
    ended = await play_random(client, game_id, 0, tokens[0], seed=1)
    assert ended.status == game_pb2.GAME_STATUS_FINISHED
    assert ended.result.seats[1].resigned
    replay = await client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id))
    sources = {r.seat: set() for r in replay.decisions}
    for record in replay.decisions:
        sources[record.seat].add(record.source)
    assert game_pb2.DECISION_SOURCE_POLICY in sources[1]
    assert sources[0] == {game_pb2.DECISION_SOURCE_SEAT}
