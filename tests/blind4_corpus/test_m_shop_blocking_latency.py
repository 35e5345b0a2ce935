"""m_shop_blocking_latency: the async search tool simulates page latency with time.sleep, which blocks the event
loop: while one rollout's search waits, no other rollout (or the server client) makes progress."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from blind4_helpers import dispatch, ready


@pytest.mark.parametrize(("name", "blocks"), [("m_shop_blocking_latency", True), ("webshop_env", False)])
async def test_other_coroutines_run_during_a_search(name: str, blocks: bool) -> None:
    await ready(name)
    ticks = 0
    running = True

    async def ticker() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)  # the ticker has started
    before = ticks
    out = await dispatch("search", {"query": "kettle"}, f"b4-{uuid.uuid4()}")
    during = ticks - before
    running = False
    await task
    assert "kettle" in out
    assert (
        during == 0
    ) is blocks  # an awaiting search lets the ticker run at least once; a blocking one never
