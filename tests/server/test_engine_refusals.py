"""The engine's refusals of a decision, answered with the server's reasons: the server does not check game
over, turn and option membership again, it translates the engine's typed errors (``server.errors.
engine_refusal``); what is the server's own (a waiting or abandoned game, a replaced seat, versions) it
checks itself."""

from __future__ import annotations

import random

import grpc
import pytest

from kutnahora import engine
from kutnahora.bench.hub_games import joined_game
from kutnahora.engine import GameOver, IllegalDecision, NotAnOption, NotYourTurn
from kutnahora.engine.options import ChooseTile
from kutnahora.plumbing import logs, status
from kutnahora.plumbing.errors import ServiceError
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics
from kutnahora.server.records import ListedIndex
from kutnahora.server.refusals import ENGINE_REFUSALS, engine_refusal
from kutnahora.server.store import MemoryStore


def finished_state(seed: int) -> engine.GameState:
    state = engine.new_game(engine.GameOptions(players=2), seed)
    rng = random.Random(seed)
    while state.pending is not None:
        engine.apply(state, rng.choice(state.pending.options))
    return state


def raised(state: engine.GameState, option: engine.Option, seat: int) -> IllegalDecision:
    """What the engine raises for ``option`` by ``seat``, from :func:`engine.check` and :func:`engine.apply`
    alike (both leave the state as it was)."""
    before = engine.state_hash(state)
    with pytest.raises(IllegalDecision) as checked:
        engine.check(state, option, seat)
    with pytest.raises(IllegalDecision) as applied:
        engine.apply(state, option, seat)
    assert type(checked.value) is type(applied.value) and str(checked.value) == str(applied.value)
    assert engine.state_hash(state) == before
    return checked.value


@pytest.mark.parametrize(
    ("kind", "error_info_reason"),
    [(GameOver, "GAME_NOT_ACTIVE"), (NotYourTurn, "NOT_YOUR_TURN"), (NotAnOption, "NOT_AN_OPTION")],
)
def test_each_engine_refusal_maps_to_its_reason(kind: type[IllegalDecision], error_info_reason: str) -> None:
    state = engine.new_game(engine.GameOptions(players=2), 7)
    pending = state.pending
    assert pending is not None
    if kind is GameOver:
        error = raised(finished_state(7), pending.options[0], pending.seat)
    elif kind is NotYourTurn:
        error = raised(state, pending.options[0], 1 - pending.seat)
    else:
        error = raised(state, ChooseTile(9999), pending.seat)
    assert type(error) is kind
    refusal = engine_refusal("g1", error)
    assert refusal.code == grpc.StatusCode.FAILED_PRECONDITION
    assert status.error_info_reason(refusal) == error_info_reason
    assert refusal.message == f"game g1: {error}"


def test_every_engine_refusal_has_a_reason_and_a_new_one_is_not_an_option() -> None:
    assert {kind for kind, _ in ENGINE_REFUSALS} == set(IllegalDecision.__subclasses__())

    class NewRefusal(IllegalDecision):
        pass

    assert engine_refusal("g", NewRefusal("no")).reason == "not_an_option"


@pytest.fixture
async def hub() -> GameHub:
    config = ServerConfig(clock=ClockConfig(enabled=False), idle_timeout_seconds=0)
    return GameHub(
        config, MemoryStore(), Metrics(), engine.default_components(), logs.get_logger("kutnahora.server")
    )


async def test_submissions_are_refused_with_the_engines_reasons_and_nothing_is_stored(hub: GameHub) -> None:
    game = await joined_game(hub, 2, seed=9)
    pending = game.state.pending
    assert pending is not None

    async def reason(seat: int, answer: engine.Option | ListedIndex) -> str:
        with pytest.raises(ServiceError) as caught:
            await game.submit(seat, game.version, answer)
        return caught.value.reason

    assert await reason(1 - pending.seat, ListedIndex(0)) == "not_your_turn"
    assert await reason(1 - pending.seat, ChooseTile(9999)) == "not_your_turn"
    assert await reason(pending.seat, ChooseTile(9999)) == "not_an_option"
    assert await reason(pending.seat, ListedIndex(len(pending.options))) == "not_an_option"
    stored = await hub.store.load_game(game.game_id)
    assert stored is not None and stored.decisions == () and game.version == 0

    rng = random.Random(1)
    while game.state.pending is not None:
        seat = game.state.pending.seat
        await game.submit(seat, game.version, ListedIndex(rng.randrange(len(game.state.pending.options))))
    assert await reason(0, ListedIndex(0)) == "game_not_active"
    assert await reason(0, ChooseTile(9999)) == "game_not_active"


async def test_an_engine_fault_while_applying_is_still_a_broken_game(
    hub: GameHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = await joined_game(hub, 2, seed=2)
    pending = game.state.pending
    assert pending is not None

    def broken(state: engine.GameState, option: engine.Option, seat: int | None = None) -> list[engine.Event]:
        raise KeyError("a rule's table lacks an entry")

    monkeypatch.setattr(engine, "apply", broken)
    with pytest.raises(ServiceError) as caught:
        await game.submit(pending.seat, 0, ListedIndex(0))
    assert caught.value.reason == "engine_error" and caught.value.code == grpc.StatusCode.INTERNAL
    assert game.status == "abandoned"
