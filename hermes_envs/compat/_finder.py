"""The lazy stand-in for upstream's top-level ``tools`` package (``tools.terminal_tool``, ``tools.budget_config``).

Upstream env files import ``from tools.terminal_tool import ...``: ``tools`` is hermes-agent's own top-level
package. We never install a ``tools`` package (that name is far too common to claim). Instead a finder sits at the
END of ``sys.meta_path``: Python asks it only after every normal finder failed to find ``tools``, so a real
hermes-agent, or a user's own ``tools`` package anywhere on ``sys.path``, always wins. It serves ``tools`` and the
submodules below only while the ``tools`` in ``sys.modules`` is our stand-in, or a namespace package (a plain
``tools/`` folder without ``__init__.py``, common in repositories) that has no module of that name; under a real
``tools`` package a missing submodule stays a normal ModuleNotFoundError.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from typing import Any

__all__ = ["STAND_INS", "StandInFinder", "install", "is_stand_in", "uninstall"]

#: Upstream module name -> our module that provides it.
STAND_INS: dict[str, str] = {
    "tools.terminal_tool": "hermes_envs.compat.terminal_tool",
    "tools.budget_config": "hermes_envs.compat.budget_config",
    "tools.registry": "hermes_envs.compat.registry",
    "tools.council_personas": "hermes_envs.compat.council_personas",
    # upstream's top-level modules beside ``tools`` (served only where no other module of that name is importable)
    "toolsets": "hermes_envs.compat.toolsets",
    "model_tools": "hermes_envs.compat.model_tools",
}
_PACKAGE = "tools"
_MARK = "__hermes_envs_stand_in__"


def is_stand_in(module: Any) -> bool:
    """True when ``module`` is the ``tools`` package (or a submodule) served by hermes-envs."""
    return bool(getattr(module, _MARK, False))


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        if spec.name == _PACKAGE:
            return None  # a plain, empty package module
        target = importlib.import_module(STAND_INS[spec.name])
        module = types.ModuleType(spec.name, target.__doc__)
        module.__dict__.update({k: v for k, v in vars(target).items() if not k.startswith("__")})
        if hasattr(target, "__all__"):
            module.__all__ = list(target.__all__)  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        setattr(module, _MARK, True)
        if module.__name__ == _PACKAGE:
            module.__doc__ = (
                "hermes-envs stand-in for hermes-agent's tools package (only what env files import)."
            )


class StandInFinder(importlib.abc.MetaPathFinder):
    """Serves ``tools`` and :data:`STAND_INS` when no real ``tools`` package is importable, and the top-level
    ``toolsets`` / ``model_tools`` when no module of that name is."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == _PACKAGE:
            # We are last on sys.meta_path: reaching here means no real ``tools`` was found.
            spec = importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)
            spec.submodule_search_locations = []
            return spec
        if fullname in STAND_INS and "." not in fullname:
            return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=False)  # no other was found
        if fullname in STAND_INS and _servable_under(sys.modules.get(_PACKAGE)):
            return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=False)
        return None


def _servable_under(package: Any) -> bool:
    """Our stand-in, or a namespace package (a bare ``tools/`` folder of scripts, no ``__init__.py``): its own
    modules were searched first and none is called ``terminal_tool``, so serving ours shadows nothing."""
    if package is None:
        return False
    if is_stand_in(package):
        return True
    spec = getattr(package, "__spec__", None)
    return (
        spec is not None and spec.origin in (None, "namespace") and getattr(package, "__file__", None) is None
    )


def install() -> StandInFinder:
    """Append the finder to ``sys.meta_path`` once (idempotent); returns the installed finder."""
    for finder in sys.meta_path:
        if isinstance(finder, StandInFinder):
            return finder
    finder = StandInFinder()
    sys.meta_path.append(finder)
    return finder


def uninstall() -> None:
    """Remove the finder and any stand-in modules it served (for tests)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, StandInFinder)]
    for name in [_PACKAGE, *STAND_INS]:
        if is_stand_in(sys.modules.get(name)):
            del sys.modules[name]
