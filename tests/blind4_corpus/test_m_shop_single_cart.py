"""m_shop_single_cart: the fake site keeps one cart for everybody, so under concurrent rollouts one rollout checks out
another's cart: a rollout that added nothing is scored on (and credited for) someone else's purchase."""

from __future__ import annotations

import uuid

import pytest
from blind4_helpers import answer, dispatch, ready, transcript

from hermes_envs.tools import ToolContext


@pytest.mark.parametrize(("name", "shared"), [("m_shop_single_cart", True), ("webshop_env", False)])
async def test_one_rollout_checks_out_anothers_cart(name: str, shared: bool) -> None:
    env = await ready(name)
    item = env._items[0]
    a, b = f"b4-{uuid.uuid4()}", f"b4-{uuid.uuid4()}"
    assert "error" not in await dispatch("add_to_cart", {"product_id": item["target"], "qty": item["qty"]}, a)
    out_b = await dispatch("checkout", {}, b)  # b never added anything
    assert ("order placed" in out_b) is shared
    ctx_b = ToolContext(b)
    try:
        score_b = await env.compute_reward(item, transcript(env.format_prompt(item), answer("Done.")), ctx_b)
    finally:
        ctx_b.cleanup()
    assert score_b == (1.0 if shared else 0.0)
