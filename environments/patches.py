"""Upstream-layout import path: ``from environments.patches import apply_patches``.

Upstream patches mini-swe-agent's Modal environment so its ``asyncio.run()`` calls do not deadlock inside the
trainer's event loop. hermes-envs has no such backend to patch: our tools never start a nested event loop (sync
tools run in a thread pool, async tools are awaited on the loop), so there is nothing to patch and
``apply_patches()`` changes nothing. It stays callable, idempotent and honest about it.
"""

from __future__ import annotations

__all__ = ["apply_patches", "applied_patches"]

_applied: list[str] = []
_ran = False


def apply_patches() -> list[str]:
    """Apply the patches hermes-envs needs for async-safe tools (none); returns the names applied (``[]``)."""
    global _ran
    _ran = True
    return list(_applied)


def applied_patches() -> list[str] | None:
    """Names of the patches applied so far; None when :func:`apply_patches` was never called."""
    return list(_applied) if _ran else None
