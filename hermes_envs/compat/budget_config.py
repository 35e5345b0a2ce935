"""Upstream's ``tools.budget_config`` (served as ``tools.budget_config``): our tool-result budget, with upstream's
current defaults (32 768 / 65 536 / 1 500 characters), ``budget_for_context_window`` and its per-tool lookup in
``tools.registry`` (a tool's ``max_result_size_chars``, capped at ``default_result_size``)."""

from __future__ import annotations

import importlib

from hermes_envs.agent import budget as _budget
from hermes_envs.agent.budget import (
    DEFAULT_MCP_RESULT_SIZE_CHARS,
    DEFAULT_PREVIEW_SIZE_CHARS,
    DEFAULT_RESULT_SIZE_CHARS,
    DEFAULT_TURN_BUDGET_CHARS,
    MCP_TOOL_PREFIX,
    PINNED_THRESHOLDS,
)

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MCP_RESULT_SIZE_CHARS",
    "DEFAULT_PREVIEW_SIZE_CHARS",
    "DEFAULT_RESULT_SIZE_CHARS",
    "DEFAULT_TURN_BUDGET_CHARS",
    "MCP_TOOL_PREFIX",
    "PINNED_THRESHOLDS",
    "BudgetConfig",
    "budget_for_context_window",
]


class BudgetConfig(_budget.BudgetConfig):
    """Our :class:`~hermes_envs.agent.budget.BudgetConfig`; a tool's own size comes from ``tools.registry``."""

    def tool_size(self, tool_name: str) -> float:
        """``registry.get_max_result_size(tool_name, default=default_result_size)`` of ``tools.registry``, read at
        call time (a real hermes-agent's registry, or our stand-in over the hermes-envs tool registry)."""
        registry = importlib.import_module("tools.registry").registry
        return registry.get_max_result_size(tool_name, default=self.default_result_size)


DEFAULT_BUDGET = BudgetConfig()


def budget_for_context_window(context_length: int | None) -> BudgetConfig:
    """A budget scaled to a ``context_length``-token window (see :func:`hermes_envs.agent.budget.
    budget_for_context_window`); ``DEFAULT_BUDGET`` itself when no window is known."""
    scaled = _budget.budget_for_context_window(context_length, base=DEFAULT_BUDGET)
    assert isinstance(scaled, BudgetConfig)
    return scaled
