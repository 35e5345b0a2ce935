"""Compatibility with env files written for the upstream hermes-agent repository.

Upstream env files import a few names from hermes-agent's own top-level ``tools`` package
(``tools.terminal_tool``, ``tools.budget_config``). :func:`install_standins` makes those importable WITHOUT
installing a ``tools`` package: a real hermes-agent or a user's own ``tools`` package always wins (see
:mod:`hermes_envs.compat._finder`). :func:`install_layout` adds it and the merge of an author's own
``environments`` package with ours; ``import environments`` and the env-file loader call it, so upstream env
files need no change.
"""

from __future__ import annotations

from ._finder import STAND_INS, StandInFinder, is_stand_in
from ._finder import install as install_standins
from ._finder import uninstall as uninstall_standins
from ._layout import LayoutFinder, package_folders


def install_layout() -> None:
    """Make upstream's layout importable: the ``tools.*`` stand-ins, and one ``environments`` package made of the
    author's and ours (see :mod:`hermes_envs.compat._layout`). Idempotent; both finders sit at the end of
    ``sys.meta_path``, so nothing importable without them changes."""
    from ._layout import install

    install_standins()
    install()


__all__ = [
    "STAND_INS",
    "LayoutFinder",
    "StandInFinder",
    "install_layout",
    "install_standins",
    "is_stand_in",
    "package_folders",
    "uninstall_standins",
]
