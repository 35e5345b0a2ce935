"""Upstream's ``tools.budget_config`` names (served as ``tools.budget_config``): our tool-result budget."""

from __future__ import annotations

from hermes_envs.agent.budget import (
    DEFAULT_BUDGET,
    DEFAULT_PREVIEW_SIZE_CHARS,
    DEFAULT_RESULT_SIZE_CHARS,
    DEFAULT_TURN_BUDGET_CHARS,
    PINNED_THRESHOLDS,
    BudgetConfig,
)

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_PREVIEW_SIZE_CHARS",
    "DEFAULT_RESULT_SIZE_CHARS",
    "DEFAULT_TURN_BUDGET_CHARS",
    "PINNED_THRESHOLDS",
    "BudgetConfig",
]
