"""m_units_calc_eval: the calc tool runs the model's expression with Python eval (builtins still reachable), so a
tool call reads the trainer's environment variables (API keys) and can run anything on the host."""

from __future__ import annotations

import uuid

import pytest
from blind4_helpers import dispatch, ready

SECRET = "sk-blind4-not-a-real-key"


@pytest.mark.parametrize(("name", "leaks"), [("m_units_calc_eval", True), ("units_env", False)])
async def test_calc_reads_a_host_secret(name: str, leaks: bool, monkeypatch) -> None:
    monkeypatch.setenv("BLIND4_FAKE_API_KEY", SECRET)
    await ready(name)
    expr = "__import__('os').environ['BLIND4_FAKE_API_KEY']"
    out = await dispatch("calc", {"expression": expr}, f"b4-{uuid.uuid4()}")
    assert (SECRET in out) is leaks
    assert await dispatch("calc", {"expression": "(120 * 1000) / (1.5 * 3600)"}, "b4-x") == repr(
        120000 / 5400
    )
