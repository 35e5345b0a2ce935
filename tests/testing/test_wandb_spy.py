"""spy_base_wandb_log: sees what reaches atroposlib's BaseEnv.wandb_log, runs it, and puts it back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from atroposlib.envs.base import BaseEnv

from hermes_envs.testing import spy_base_wandb_log


def test_spy_records_calls_runs_the_original_and_restores(monkeypatch: Any) -> None:
    ran: list[dict] = []

    async def base_log(self: Any, wandb_metrics: dict | None = None) -> None:
        ran.append(dict(wandb_metrics or {}))

    monkeypatch.setattr(BaseEnv, "wandb_log", base_log)
    with spy_base_wandb_log(lambda m: {k: v for k, v in m.items() if k.startswith("train/")}) as calls:
        asyncio.run(BaseEnv.wandb_log(object(), {"train/x": 1, "other": 2}))  # type: ignore[arg-type]
        asyncio.run(BaseEnv.wandb_log(object()))  # type: ignore[arg-type]
    assert calls == [{"train/x": 1}, {}]
    assert ran == [{"train/x": 1, "other": 2}, {}]
    assert BaseEnv.__dict__["wandb_log"] is base_log


def test_spy_restores_on_error(monkeypatch: Any) -> None:
    async def base_log(self: Any, wandb_metrics: dict | None = None) -> None:
        return None

    monkeypatch.setattr(BaseEnv, "wandb_log", base_log)
    with pytest.raises(RuntimeError), spy_base_wandb_log():
        raise RuntimeError("boom")
    assert BaseEnv.__dict__["wandb_log"] is base_log
