"""Compatibility with env files written for the upstream hermes-agent repository.

Upstream env files import a few names from hermes-agent's own top-level ``tools`` package
(``tools.terminal_tool``, ``tools.budget_config``). :func:`install_standins` makes those importable WITHOUT
installing a ``tools`` package: a real hermes-agent or a user's own ``tools`` package always wins (see
:mod:`hermes_envs.compat._finder`). ``import environments`` calls it, so upstream env files need no change.
"""

from __future__ import annotations

from ._finder import STAND_INS, StandInFinder, is_stand_in
from ._finder import install as install_standins
from ._finder import uninstall as uninstall_standins

__all__ = ["STAND_INS", "StandInFinder", "install_standins", "is_stand_in", "uninstall_standins"]
