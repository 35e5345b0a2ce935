"""One ``environments`` package made of the author's and ours: whichever is first on ``sys.path`` is imported, and
a submodule it lacks is looked up in every other ``environments`` package folder (ours included).

An author's repository laid out like upstream has its own ``environments/__init__.py`` (with envs in subpackages
such as ``environments/benchmarks/<name>/``). When that package is imported first, ``environments.hermes_base_env``
must still come from hermes-envs; when ours is first, ``environments.benchmarks.<name>`` must still come from the
author's folder. A finder at the END of ``sys.meta_path`` does both: Python asks it only after the normal search of
the imported package's own ``__path__`` failed, so nothing of either package is ever shadowed.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from pathlib import Path

__all__ = ["LayoutFinder", "OURS", "PACKAGE", "install", "package_folders", "uninstall"]

PACKAGE = "environments"
#: The folder of the ``environments`` package shipped with hermes-envs (beside ``hermes_envs`` in a wheel install,
#: in the checkout for an editable one).
OURS = Path(__file__).resolve().parents[2] / PACKAGE


def package_folders() -> list[str]:
    """Every ``environments`` package folder reachable now: each ``sys.path`` entry's, in order, then ours."""
    found: list[str] = []
    for entry in [*sys.path, str(OURS.parent)]:
        folder = Path(entry or ".") / PACKAGE
        if (folder / "__init__.py").is_file():
            resolved = str(folder.resolve())
            if resolved not in found:
                found.append(resolved)
    return found


class LayoutFinder(importlib.abc.MetaPathFinder):
    """Serves ``environments.<name>`` from another ``environments`` folder when the imported package lacks it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top, dot, rest = fullname.partition(".")
        if top != PACKAGE or not dot or "." in rest:
            return None  # only direct submodules: deeper ones follow their parent's own __path__
        parent = sys.modules.get(PACKAGE)
        if parent is None:
            return None
        searched = {str(Path(p).resolve()) for p in getattr(parent, "__path__", None) or []}
        others = [folder for folder in package_folders() if folder not in searched]
        if not others:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, others)


def install() -> LayoutFinder:
    """Append the finder to ``sys.meta_path`` once (idempotent); returns the installed finder."""
    for finder in sys.meta_path:
        if isinstance(finder, LayoutFinder):
            return finder
    finder = LayoutFinder()
    sys.meta_path.append(finder)
    return finder


def uninstall() -> None:
    """Remove the finder (for tests)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, LayoutFinder)]
