"""Run at interpreter start by ``hermes_envs_layout.pth`` (installed with the hermes-envs wheel): makes upstream's
layout importable without importing anything of hermes-envs first.

Standard library only, and it does nothing until Python fails to find ``tools``, ``tools.<name>``, ``toolsets``,
``model_tools`` or ``environments.<name>`` everywhere else (it sits at the END of ``sys.meta_path``). Then it installs the real finders
of :mod:`hermes_envs.compat` (the ``tools.*`` stand-ins, and one ``environments`` package made of the author's and
ours) and lets them answer. So ``from tools.budget_config import BudgetConfig`` works in a fresh interpreter, and a
repository with its own ``environments/__init__.py`` still gets ``environments.hermes_base_env``; a real
hermes-agent, or the user's own ``tools`` package, is found first and never touched.

PYTEST_DONT_REWRITE (pytest would otherwise warn, in every run, that this already-imported module cannot be rewritten).
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

_TOP_LEVEL = frozenset({"tools", "toolsets", "model_tools"})


class _Bootstrap:
    """A meta path finder (``importlib.abc`` is not imported: it costs ~20 ms at every interpreter start)."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in _TOP_LEVEL and not fullname.startswith(("tools.", "environments.")):
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        from hermes_envs.compat import install_layout

        install_layout()
        for finder in sys.meta_path:
            if type(finder).__module__.startswith("hermes_envs.compat"):
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    return spec
        return None


def install() -> None:
    """Append the bootstrap finder once."""
    if not any(type(f).__name__ == "_Bootstrap" for f in sys.meta_path):
        sys.meta_path.append(_Bootstrap())


install()
