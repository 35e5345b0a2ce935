"""Lazy facades: a package's public names imported from their modules on first access.

The pytest plugin imports ``hermes_envs.testing`` and ``hermes_envs.conformance`` at every pytest start; most of
their modules pull in aiohttp, vcrpy, syrupy, atroposlib or transformers, which a session that does not use them
should not pay for. A facade lists ``{name: module}`` and gets its ``__getattr__``/``__dir__`` from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, table: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name in ``table`` is imported from its module on first access
    and cached in ``namespace`` (the package's globals), so later reads cost nothing."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(table)

    return __getattr__, __dir__
