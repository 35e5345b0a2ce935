"""Running checks on a session: select / ignore, prerequisites first, one outcome per check id, cached.

:class:`CheckScheduler` is mixed into :class:`~hermes_envs.conformance.session.EnvSession`; a check that crashes is
reported against the env with what happened, and one failure never hides the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hermes_envs.conformance.findings import Finding, NotApplicable, Outcome, Skip, Status
from hermes_envs.conformance.registry import CHECKS, all_checks
from hermes_envs.errors import EnvLoadError


class CheckScheduler:
    """The check-running half of a session: needs ``settings``, ``outcomes``, ``label``, ``load()``, ``env_cls``
    and ``module`` from the class it is mixed into."""

    settings: Any
    outcomes: dict[str, Outcome]
    label: str
    env_cls: type | None
    module: Any

    load: Callable[[], type]  # EnvSession.load: import the module, pick the class

    def selected(self) -> list[str]:
        """Ids of the checks this run executes (select / ignore applied)."""
        ids = [c.id for c in all_checks()]
        if self.settings.select:
            ids = [i for i in ids if any(i.startswith(s) for s in self.settings.select)]
        return [i for i in ids if not any(i.startswith(s) for s in self.settings.ignore)]

    def run(self, check_id: str) -> Outcome:
        """Run one check (its prerequisites first), caching the outcome."""
        if check_id in self.outcomes:
            return self.outcomes[check_id]
        info = CHECKS[check_id]
        ignored = self.env_ignores().get(check_id)
        if ignored is not None and not any(check_id.startswith(f) for f in self.settings.forced):
            outcome = Outcome(
                check_id, Status.SKIPPED, note=f"ignored by the env's conformance_ignore: {ignored}"
            )
            self.outcomes[check_id] = outcome
            return outcome
        for req in info.requires:
            if self.is_ignored(req):
                # Ignoring a check silences its findings, not the checks built on it: they run (and say what
                # they see) as if it had passed, so an ignored HC401 never turns a broken reward green.
                continue
            prior = self.run(req)
            if prior.status not in (Status.PASSED, Status.WARNED, Status.NOT_APPLICABLE):
                note = f"needs {req}, which did not pass"
                if prior.status is Status.SKIPPED and prior.note.startswith("needs "):
                    note = prior.note  # the root cause, not the chain of checks it blocked
                outcome = Outcome(check_id, Status.SKIPPED, note=note)
                self.outcomes[check_id] = outcome
                return outcome
        start = time.perf_counter()
        try:
            findings: list[Finding] = info.fn(self)
            outcome = Outcome.from_findings(check_id, findings)
        except NotApplicable as exc:
            outcome = Outcome(check_id, Status.NOT_APPLICABLE, note=str(exc))
        except Skip as exc:
            outcome = Outcome(check_id, Status.SKIPPED, note=str(exc))
        except Exception as exc:  # a check that crashes is reported against the env, with what happened
            outcome = Outcome(
                check_id,
                Status.FAILED,
                [
                    Finding(
                        check_id,
                        f"running this check on {self.label} raised {type(exc).__name__}: {exc}",
                        "see the message; if it points into hermes-envs itself, please report it.",
                    )
                ],
            )
        outcome.seconds = time.perf_counter() - start
        self.outcomes[check_id] = outcome
        return outcome

    def is_ignored(self, check_id: str) -> bool:
        """True when the run ignores ``check_id`` (settings or the env's conformance_ignore, unless forced)."""
        if any(check_id.startswith(f) for f in self.settings.forced):
            return False
        return check_id in self.env_ignores() or any(check_id.startswith(i) for i in self.settings.ignore)

    def env_ignores(self) -> dict[str, str]:
        """``conformance_ignore`` of the env class or module: ``{"HC302": "why"}`` or ``["HC302"]``.

        The env-level "marker": it beats pyproject's select, and an id named on the command line (--hermes-select)
        beats it. See docs/checks.md, "Configuration".
        """
        try:
            self.load()
        except EnvLoadError:
            return {}
        raw = getattr(self.env_cls, "conformance_ignore", None) or getattr(
            self.module, "conformance_ignore", None
        )
        if not raw:
            return {}
        if isinstance(raw, dict):
            return {str(k): str(v) for k, v in raw.items()}
        return {str(k): "no reason given" for k in raw}

    def run_all(self) -> list[Outcome]:
        """Run every selected check; one failure never hides the others."""
        return [self.run(i) for i in self.selected()]
