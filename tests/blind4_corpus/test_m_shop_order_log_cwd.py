"""m_shop_order_log_cwd: checkout appends an audit line to shop_orders.jsonl in the trainer's working directory, a
host file outside every sandbox that grows with every order of every run."""

from __future__ import annotations

import uuid

import pytest
from blind4_helpers import dispatch, ready


@pytest.mark.parametrize(("name", "writes"), [("m_shop_order_log_cwd", True), ("webshop_env", False)])
async def test_checkout_writes_to_the_host(name: str, writes: bool, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = await ready(name)
    item = env._items[0]
    task = f"b4-{uuid.uuid4()}"
    await dispatch("add_to_cart", {"product_id": item["target"], "qty": 1}, task)
    assert "order placed" in await dispatch("checkout", {}, task)
    assert (tmp_path / "shop_orders.jsonl").exists() is writes
