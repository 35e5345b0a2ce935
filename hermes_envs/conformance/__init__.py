"""The conformance kit: checks that catch the mistakes environment authors make, with findings that say the fix.

Names are loaded on first access: the pytest plugin imports :mod:`hermes_envs.conformance._stash` at every pytest
start, which must not pull in the session, the probes and the fake server when no conformance run was asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_envs._lazy import lazy_attributes

_LAZY: dict[str, str] = {
    "Finding": "hermes_envs.conformance._findings",
    "Outcome": "hermes_envs.conformance._findings",
    "Severity": "hermes_envs.conformance._findings",
    "Status": "hermes_envs.conformance._findings",
    "CHECKS": "hermes_envs.conformance._registry",
    "CHECK_REGISTRY": "hermes_envs.conformance._registry",
    "CheckInfo": "hermes_envs.conformance._registry",
    "all_checks": "hermes_envs.conformance._registry",
    "check": "hermes_envs.conformance._registry",
    "ConformanceReport": "hermes_envs.conformance._runner",
    "run_conformance": "hermes_envs.conformance._runner",
    "EnvSession": "hermes_envs.conformance._session",
    "Settings": "hermes_envs.conformance._settings",
}

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ below imports on first use
    # (``X as X``: the explicit re-export mypy's no_implicit_reexport asks for, since ``__all__`` is computed)
    from hermes_envs.conformance._findings import Finding as Finding
    from hermes_envs.conformance._findings import Outcome as Outcome
    from hermes_envs.conformance._findings import Severity as Severity
    from hermes_envs.conformance._findings import Status as Status
    from hermes_envs.conformance._registry import CHECK_REGISTRY as CHECK_REGISTRY
    from hermes_envs.conformance._registry import CHECKS as CHECKS
    from hermes_envs.conformance._registry import CheckInfo as CheckInfo
    from hermes_envs.conformance._registry import all_checks as all_checks
    from hermes_envs.conformance._registry import check as check
    from hermes_envs.conformance._runner import ConformanceReport as ConformanceReport
    from hermes_envs.conformance._runner import run_conformance as run_conformance
    from hermes_envs.conformance._session import EnvSession as EnvSession
    from hermes_envs.conformance._settings import Settings as Settings

__all__ = sorted(_LAZY)


_lazy_getattr, __dir__ = lazy_attributes(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    value = _lazy_getattr(name)
    # Whoever reaches the kit through the facade gets the whole catalogue registered (the check modules import the
    # registry and the session, never the reverse).
    import hermes_envs.conformance.checks

    return value
