"""A spy on atroposlib's ``BaseEnv.wandb_log``: which metrics reached the base class (used by conformance checks)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["spy_base_wandb_log"]


@contextmanager
def spy_base_wandb_log(
    keep: Callable[[dict[str, Any]], dict[str, Any]] = dict,
) -> Iterator[list[dict[str, Any]]]:
    """Record ``keep(metrics)`` of every call that reaches ``BaseEnv.wandb_log`` while the block runs.

    The original still runs (the spy wraps, it does not replace) and is put back on exit, even on an error.
    """
    from atroposlib.envs.base import BaseEnv

    calls: list[dict[str, Any]] = []
    original = BaseEnv.__dict__["wandb_log"]

    async def spy(env_self: Any, wandb_metrics: dict | None = None, *args: Any, **kwargs: Any) -> Any:
        calls.append(keep(dict(wandb_metrics or {})))
        return await original(env_self, wandb_metrics, *args, **kwargs)

    BaseEnv.wandb_log = spy
    try:
        yield calls
    finally:
        BaseEnv.wandb_log = original
