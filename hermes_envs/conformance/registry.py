"""The check registry: ``@check(id, title, ...)`` registers one function per check under a stable id.

Ids are stable and never reused. A duplicate id is a loud error at import time, so two checks can never answer to
the same id in a report or an ``ignore`` list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_envs.conformance.findings import Finding, Severity
from hermes_envs.errors import HermesEnvsError

if TYPE_CHECKING:
    from hermes_envs.conformance.session import EnvSession

CheckFn = Callable[["EnvSession"], "list[Finding]"]


@dataclass(frozen=True)
class CheckInfo:
    """A registered check: id, short slug, what it catches (its docstring), severity, prerequisites."""

    id: str
    slug: str
    title: str
    catches: str
    severity: Severity
    requires: tuple[str, ...]
    fn: CheckFn

    @property
    def area(self) -> str:
        return _AREAS.get(self.id[:3], "other")


_AREAS = {
    "HC1": "structure",
    "HC2": "data",
    "HC3": "prompt",
    "HC4": "reward",
    "HC5": "trajectory",
    "HC6": "isolation",
    "HC7": "evaluate",
    "HC8": "parsers",
    "HC9": "security",
}

CHECKS: dict[str, CheckInfo] = {}


def check(
    check_id: str,
    slug: str,
    title: str,
    *,
    severity: Severity = Severity.ERROR,
    requires: tuple[str, ...] = (),
) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as check ``check_id``; its docstring says which bug it catches."""

    def register(fn: CheckFn) -> CheckFn:
        if check_id in CHECKS:
            raise HermesEnvsError(
                f"check id {check_id} is registered twice ({CHECKS[check_id].fn.__qualname__} and "
                f"{fn.__qualname__}). Check ids are stable and unique: pick a new id."
            )
        CHECKS[check_id] = CheckInfo(
            id=check_id,
            slug=slug,
            title=title,
            catches=" ".join((fn.__doc__ or "").split()),
            severity=severity,
            requires=requires,
            fn=fn,
        )
        return fn

    return register


def all_checks() -> list[CheckInfo]:
    """Every registered check, in id order (importing the check modules first)."""
    import hermes_envs.conformance.checks  # noqa: F401  (registers the checks)

    return [CHECKS[k] for k in sorted(CHECKS)]
