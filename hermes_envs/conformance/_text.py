"""Quoting values in findings: every check cuts an item, a reply or a transcript it names the same way.

A helper of the kit that the check modules import (it was ``_observations.scoring._short``, a private name).
"""

from __future__ import annotations

from typing import Any

from hermes_envs._text import short_repr

__all__ = ["short"]


def short(value: Any, limit: int = 160) -> str:
    """``repr(value)`` cut to ``limit`` characters and marked with "…", for quoting a value in a finding."""
    return short_repr(value, limit, marker="…")
