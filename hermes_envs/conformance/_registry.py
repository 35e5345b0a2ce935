"""The check registry: ``@check(id, title, ...)`` registers one function per check under a stable id.

Ids are stable and never reused. A duplicate id is a loud error at import time (the package's one duplicate-name
rule, :class:`hermes_envs._registry.Registry`), so two checks can never answer to the same id in a report or an
``ignore`` list; the same check module imported again replaces its own entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from hermes_envs._definitions import definition_site
from hermes_envs._registry import Registry
from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.errors import RegistryError

__all__ = [
    "CHECKS",
    "CHECK_REGISTRY",
    "CheckFn",
    "CheckIdError",
    "CheckInfo",
    "SCORE_PREREQUISITES",
    "all_checks",
    "check",
]

#: The checks every score-based reward check requires first: the scores exist, are floats, and are in range.
SCORE_PREREQUISITES = ("HC401", "HC402", "HC403")

#: A registered check function, as the registry stores it. A check takes the EnvSession, which this module cannot
#: name (the session imports the registry through its scheduler; even an ``if TYPE_CHECKING:`` import is a module
#: cycle tests/test_layers.py refuses), so the registry leaves the argument open; :func:`check` returns each
#: function with its own signature (``(s: EnvSession) -> list[Finding]``), which mypy checks at every call.
CheckFn = Callable[..., "list[Finding]"]
_F = TypeVar("_F", bound=CheckFn)


@dataclass(frozen=True)
class CheckInfo:
    """A registered check: id, short slug, what it catches (its docstring), why that matters for training, the usual
    fix, severity, prerequisites. docs/checks.md is generated from these fields alone."""

    id: str
    slug: str
    title: str
    catches: str
    severity: Severity
    requires: tuple[str, ...]
    fn: CheckFn
    #: Why the bug matters for training (the "Why it matters" line of docs/checks.md).
    why: str
    #: The usual fix (the "Fix" line of docs/checks.md).
    fix: str
    #: Run only under ``--thorough`` / ``--hermes-thorough`` (a costly oracle); skipped otherwise.
    thorough: bool = False
    #: Called with the session once its env class has loaded, before the later checks run (a whole-catalogue run
    #: only): starts in the background what the check will need (HC404's other interpreters). It must not change
    #: what the check finds; the check does the work itself when it was not called or failed.
    prepare: Callable[..., None] | None = None

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


class CheckIdError(RegistryError):
    """Two checks registered under one id."""


#: Every registered check by id (the shared Registry: one duplicate rule, ``CHECK_REGISTRY.isolated()`` in tests).
CHECK_REGISTRY: Registry[CheckInfo] = Registry(
    "check id", error=CheckIdError, unknown_fix="see docs/checks.md for the ids."
)


class _CheckTable(Mapping[str, CheckInfo]):
    """A read-only ``{id: CheckInfo}`` view of :data:`CHECK_REGISTRY` (what reports and the plugin index)."""

    def __getitem__(self, check_id: str) -> CheckInfo:
        found = CHECK_REGISTRY.find(check_id)
        if found is None:
            raise KeyError(check_id)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(CHECK_REGISTRY)

    def __len__(self) -> int:
        return len(CHECK_REGISTRY)


CHECKS: Mapping[str, CheckInfo] = _CheckTable()


def check(
    check_id: str,
    slug: str,
    title: str,
    *,
    severity: Severity = Severity.ERROR,
    requires: tuple[str, ...] = (),
    thorough: bool = False,
    why: str = "",
    fix: str = "",
    prepare: Callable[..., None] | None = None,
) -> Callable[[_F], _F]:
    """Register ``fn`` as check ``check_id``: its docstring says which bug it catches, ``why`` why that matters for
    training and ``fix`` the usual fix (both required: they are the check's entry in docs/checks.md)."""

    def register(fn: _F) -> _F:
        missing = " and ".join(name for name, text in (("why", why), ("fix", fix)) if not text.strip())
        if missing:
            raise RegistryError(
                f"check {check_id} ({fn.__qualname__}) should pass a non-empty {missing} to @check(...); got "
                f"{missing} empty or left out. "
                'Fix: add why="why the bug matters for training" and fix="the usual fix": they are the check\'s '
                "entry in docs/checks.md."
            )
        info = CheckInfo(
            id=check_id,
            slug=slug,
            title=title,
            catches=" ".join((fn.__doc__ or "").split()),
            severity=severity,
            requires=requires,
            fn=fn,
            thorough=thorough,
            prepare=prepare,
            why=why,
            fix=fix,
        )
        CHECK_REGISTRY.register(
            check_id,
            info,
            site=definition_site(fn),
            describe=lambda owner, _site: owner.fn.__qualname__,
            fix="check ids are stable and unique: pick a new id.",
        )
        return fn

    return register


def all_checks() -> list[CheckInfo]:
    """Every registered check, in id order.

    The catalogue registers itself when :mod:`hermes_envs.conformance.checks` is imported, which the package
    facade, the runner, the pytest collection and the docs generator do; this module never imports it, so the
    check modules (which import the registry and the session) sit above both and the imports run one way.
    """
    if not len(CHECK_REGISTRY):
        raise RegistryError(
            "the conformance checks should be registered before they are listed; got none. "
            "Fix: import hermes_envs.conformance.checks (or use hermes_envs.conformance, which does)."
        )
    return [CHECKS[k] for k in sorted(CHECKS)]
