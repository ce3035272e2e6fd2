"""``store.to_the_end``: how a caller waits for a write handed to a store's writer when it is cancelled."""

from __future__ import annotations

import asyncio
import time

import pytest

from kutnahora.server.store import StoreError, to_the_end


async def test_a_cancelled_caller_gets_the_writes_outcome_and_is_cancelled_at_its_next_wait() -> None:
    write: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    steps: list[str] = []

    async def caller() -> None:
        steps.append(await to_the_end(write))
        await asyncio.sleep(5)
        steps.append("went on")

    task = asyncio.create_task(caller())
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(0.01)
    assert not task.done(), "the caller stopped waiting for a write under way"
    write.set_result("stored")
    with pytest.raises(asyncio.CancelledError):
        await task
    assert steps == ["stored"]


async def test_a_write_that_fails_after_the_cancellation_raises_its_error_first() -> None:
    write: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    seen: list[BaseException] = []

    async def caller() -> None:
        try:
            await to_the_end(write)
        except StoreError as error:
            seen.append(error)
        await asyncio.sleep(5)

    task = asyncio.create_task(caller())
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(0)
    write.set_exception(StoreError("the disk is full"))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [str(error) for error in seen] == ["the disk is full"]


async def test_a_writer_that_does_not_finish_is_given_up_on_after_the_grace() -> None:
    write: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(to_the_end(write, grace=0.05))
    await asyncio.sleep(0)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started >= 0.05
    assert not write.done()  # the write itself is left to its writer


async def test_without_a_cancellation_it_is_the_write_itself() -> None:
    write: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_later(0.01, write.set_result, 7)
    assert await to_the_end(write) == 7
