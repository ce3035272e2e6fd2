"""A game's decision history: older decisions are packed and read back as they were applied, and an exact
retry of a decision that left the detail window is still answered with the same bytes."""

from __future__ import annotations

import sys
import threading
from dataclasses import replace

import grpc
import grpc.aio
import pytest

from kutnahora.engine import Event
from kutnahora.engine.options import ChooseGuildSet, ChooseSquare, DecisionKind, PlayCard
from kutnahora.server.history import DETAIL_WINDOW, DecisionHistory
from kutnahora.server.records import AppliedDecision, DecisionSource, canonical_text
from tests.server.conftest import Client


def decisions(count: int) -> list[AppliedDecision]:
    """``count`` applied decisions with every field varied; the last one ends the game."""
    kinds = list(DecisionKind)
    sources = list(DecisionSource)
    options = [ChooseGuildSet(2), ChooseSquare(4, 3), PlayCard(7, None)]
    made = []
    for version in range(count):
        option = options[version % len(options)]
        made.append(
            AppliedDecision(
                version=version,
                seat=version % 4,
                option=option,
                text=canonical_text(option),
                source=sources[version % len(sources)],
                think_ms=version * 1_000_003,
                applied_at=1_796_000_000.125 + version / 7,
                game_over=version == count - 1,
                options=(option,),
                events=(Event("card_played", version % 4, f"event {version}"),),
                kind=kinds[version % len(kinds)] if version % 5 else None,
            )
        )
    return made


def without_details(record: AppliedDecision) -> AppliedDecision:
    return replace(record, options=None, events=None)


def test_packed_decisions_read_back_as_applied_and_the_window_keeps_its_details() -> None:
    made = decisions(40)
    history = DecisionHistory(made[:30], window=4)
    for record in made[30:]:
        history.append(record)
    expected = [without_details(r) for r in made[:-4]] + made[-4:]
    assert len(history) == 40
    assert list(history) == expected
    assert [history[v] for v in range(40)] == expected
    assert history[-1] is made[-1] and history[-1].game_over
    assert history[-5] == expected[-5] and history[-5].options is None and history[-5].events is None
    assert history[3:9] == expected[3:9]
    assert history[:0] == [] and history[35:] == expected[35:]
    assert history[::-7] == expected[::-7]
    with pytest.raises(IndexError, match="no decision 40 in a history of 40"):
        history[40]
    with pytest.raises(IndexError):
        history[-41]


def test_the_history_takes_only_the_next_version() -> None:
    made = decisions(3)
    history = DecisionHistory(made[:1])
    with pytest.raises(ValueError, match="decision 2 cannot follow a history of 1"):
        history.append(made[2])
    assert len(history) == 1
    with pytest.raises(ValueError, match="at least one"):
        DecisionHistory(window=0)


async def test_an_exact_retry_of_a_decision_past_the_window_is_answered_with_the_same_bytes(
    client: Client,
) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=6)
    seat = (await client.observe(game_id)).pending.seat
    first = await client.submit(game_id, seat, tokens[seat], 0, option_index=0)
    played = 1
    while played <= 2 * DETAIL_WINDOW + 40:  # past the window and the server's cache of answers
        pending = (await client.observe(game_id)).pending
        await client.submit(game_id, pending.seat, tokens[pending.seat], played, option_index=0)
        played += 1
    retry = await client.submit(game_id, seat, tokens[seat], 0, option_index=0)
    assert retry.SerializeToString() == first.SerializeToString()
    assert list(first.events), "the first decision's answer tells its events"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.submit(game_id, seat, tokens[seat], 0, option_index=1)
    assert caught.value.code() == grpc.StatusCode.ABORTED
    assert "already answered" in (caught.value.details() or "")
    assert (await client.observe(game_id)).version == played


def test_a_reader_in_another_thread_sees_every_version_in_place_while_decisions_are_appended() -> None:
    """Replays read the history in worker threads while the event loop appends: every slice taken must
    hold each version at its own index, whole or packed, however the threads interleave."""
    made = decisions(4000)
    history = DecisionHistory(window=3)
    failures: list[str] = []
    done = threading.Event()

    def read() -> None:
        try:
            while not done.is_set():
                size = len(history)
                for version in range(max(size - 6, 0), size):  # about the window's edge, where records move
                    if history[version].version != version:
                        failures.append(f"decision {version} read back as another")
                        return
                if size % 50 == 0 and [record.version for record in history[:size]] != list(range(size)):
                    failures.append(f"a slice of {size} held versions out of place")
                    return
        except Exception as error:  # an index the history should have held
            failures.append(repr(error))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    reader = threading.Thread(target=read)
    reader.start()
    try:
        for record in made:
            history.append(record)
    finally:
        done.set()
        reader.join()
        sys.setswitchinterval(interval)
    assert not failures, failures[0]
    assert [record.version for record in history] == list(range(4000))
