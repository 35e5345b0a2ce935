"""m_support_audit_log: a tool must not write into the trainer's working directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from blind3_helpers import build, load


async def _files_left(name: str, ctx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    env = build(name)
    await env.setup()
    ticket = load(name).TICKETS[env._items[0]["ticket_id"]]
    order = next(o for o in ticket["orders"] if o["order_id"] == ticket["damaged"])
    monkeypatch.chdir(tmp_path)  # stands for the trainer's working directory
    ctx.call_tool("verify_customer", {"ticket_id": ticket["ticket_id"], "email": ticket["email"]})
    out = ctx.call_tool(
        "issue_refund",
        {"ticket_id": ticket["ticket_id"], "order_id": order["order_id"], "amount": order["total"]},
    )
    assert "refunded" in out
    return sorted(p.name for p in tmp_path.iterdir())


async def test_correct_env_leaves_the_host_alone(
    ctx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await _files_left("support_desk_env", ctx, tmp_path, monkeypatch) == []


async def test_mutant_writes_an_audit_file_in_the_trainers_cwd(
    ctx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await _files_left("m_support_audit_log", ctx, tmp_path, monkeypatch) == ["refund_audit.jsonl"]
