"""Running checks on a session: select / ignore, prerequisites first, one outcome per check id, cached.

:class:`CheckScheduler` runs the checks of one :class:`~hermes_envs.conformance._session.EnvSession`, which it
sees through :class:`CheckContext` (what scheduling needs of a session); a check that crashes is reported against
the env with what happened, and one failure never hides the others.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from hermes_envs.conformance._findings import Finding, NotApplicable, Outcome, Skip, Status
from hermes_envs.conformance._registry import CHECKS, all_checks
from hermes_envs.conformance._settings import Settings
from hermes_envs.conformance._standins import NEEDS_OWN_DATA
from hermes_envs.conformance._static import STATIC, STATIC_NOTE
from hermes_envs.errors import EnvLoadError

__all__ = ["CheckScheduler"]


class CheckContext(Protocol):
    """What the scheduler needs of a session; the session itself is what each check receives."""

    @property
    def settings(self) -> Settings: ...
    @property
    def label(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def env_cls(self) -> type | None: ...
    @property
    def module(self) -> ModuleType | None: ...
    def load(self) -> type[Any]: ...
    def stand_in_note(self) -> str | None: ...


class CheckScheduler:
    """Runs checks on ``session`` (select / ignore, prerequisites first), keeping one outcome per check id."""

    def __init__(self, session: CheckContext) -> None:
        self.session = session
        self.outcomes: dict[str, Outcome] = {}
        self._prepared = False

    @property
    def settings(self) -> Settings:
        return self.session.settings

    def selected(self) -> list[str]:
        """Ids of the checks this run executes (select / ignore applied)."""
        return selected_checks(self.settings)

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
        if info.thorough and not self.settings.thorough:
            outcome = Outcome(
                check_id, Status.SKIPPED, note="a costly oracle: it runs with --thorough (--hermes-thorough)"
            )
            self.outcomes[check_id] = outcome
            return outcome
        if info.requires and check_id != "HC102" and self._load_failed():
            # The module does not import (or has no env class): judge what the source alone can show.
            static = STATIC.get(check_id)
            if static is not None:
                outcome = self._run_static(check_id, static)
            else:
                root = "HC101" if self.run("HC101").failed else "HC102"
                outcome = Outcome(check_id, Status.SKIPPED, note=f"needs {root}, which did not pass")
            self.outcomes[check_id] = outcome
            return outcome
        stand_in = ""
        for req in info.requires:
            if self.is_ignored(req):
                # Ignoring a check silences its findings, not the checks built on it: they run (and say what
                # they see) as if it had passed, so an ignored HC401 never turns a broken reward green.
                continue
            prior = self.run(req)
            if prior.stand_in:
                stand_in = prior.stand_in
            if prior.status is Status.FAILED and req == "HC201" and check_id not in NEEDS_OWN_DATA:
                # setup() failed offline: with stand-in items the checks that need items (not the env's own data)
                # still run, saying so.
                note = self.session.stand_in_note()
                if note is not None:
                    stand_in = note
                    continue
            if prior.status not in (Status.PASSED, Status.WARNED, Status.NOT_APPLICABLE):
                note = f"needs {req}, which did not pass"
                if prior.status is Status.SKIPPED and prior.note.startswith("needs "):
                    note = prior.note  # the root cause, not the chain of checks it blocked
                outcome = Outcome(check_id, Status.SKIPPED, note=note)
                self.outcomes[check_id] = outcome
                return outcome
        start = time.perf_counter()
        try:
            findings: list[Finding] = info.fn(self.session)
            outcome = Outcome.from_findings(check_id, findings)
        except NotApplicable as exc:
            outcome = Outcome(check_id, Status.NOT_APPLICABLE, note=str(exc))
        except Skip as exc:
            outcome = Outcome(check_id, Status.SKIPPED, note=str(exc))
        except Exception as exc:  # a check that crashes is reported against the env, with what happened
            outcome = _crashed(self.session.label, check_id, exc)
        outcome.seconds = time.perf_counter() - start
        if outcome.findings:
            outcome.findings = [self._kit_gap(f) for f in outcome.findings]
        if stand_in and outcome.status is not Status.SKIPPED:
            outcome = _on_stand_ins(outcome, stand_in)
        self.outcomes[check_id] = outcome
        return outcome

    def _run_static(self, check_id: str, static: Callable[[Any], list[Finding]]) -> Outcome:
        """Run the static counterpart of ``check_id`` on the env's source; its findings say they were."""
        start = time.perf_counter()
        try:
            findings = static(self.session)
        except NotApplicable as exc:
            return Outcome(check_id, Status.NOT_APPLICABLE, note=str(exc))
        except (Skip, SyntaxError, OSError) as exc:
            return Outcome(check_id, Status.SKIPPED, note=f"needs the module to import (see HC101); {exc}")
        outcome = Outcome.from_findings(check_id, findings)
        outcome.note = STATIC_NOTE
        outcome.seconds = time.perf_counter() - start
        return outcome

    def _kit_gap(self, finding: Finding) -> Finding:
        """``finding`` reworded when what it reports is the env reaching for a part of upstream's surface that
        hermes-envs lacks: a gap of the kit, said so, never left as the author's mistake."""
        from hermes_envs.env._causes import kit_gap

        gap = kit_gap(finding.message, self.session.env_cls, self.session.path)
        if gap is None:
            return finding
        return dataclasses.replace(
            finding,
            message=f"{finding.message} Cause: {gap}",
            fix="nothing in the env: hermes-envs should provide it. Until it does, run the env with hermes-agent "
            f"installed, or silence {finding.check_id} for this env.",
        )

    def _load_failed(self) -> bool:
        try:
            self.session.load()
        except EnvLoadError:
            return True
        return False

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
            self.session.load()
        except EnvLoadError:
            return {}
        raw = getattr(self.session.env_cls, "conformance_ignore", None) or getattr(
            self.session.module, "conformance_ignore", None
        )
        if not raw:
            return {}
        if isinstance(raw, dict):
            return {str(k): str(v) for k, v in raw.items()}
        return {str(k): "no reason given" for k in raw}

    def run_all(self) -> list[Outcome]:
        """Run every selected check; one failure never hides the others. Once the env class has loaded, the
        ``prepare`` hooks of the checks still to run start their background work (see :meth:`prepare_pending`)."""
        outcomes = []
        for check_id in self.selected():
            outcomes.append(self.run(check_id))
            self.prepare_pending()
        return outcomes

    def prepare_pending(self) -> None:
        """Once per run, as soon as the env class has loaded: the ``prepare`` hooks of the selected checks not run
        yet start their background work (see CheckInfo.prepare). A run that calls :meth:`run` check by check (the
        contained worker) calls this after each check, as :meth:`run_all` does."""
        if self._prepared or self.session.env_cls is None:
            return
        self._prepared = True
        for hook_id in self.selected():
            if CHECKS[hook_id].prepare is not None and hook_id not in self.outcomes and self._runs(hook_id):
                self._prepare(hook_id)

    def _runs(self, check_id: str) -> bool:
        """Whether ``check_id`` will run its own code (not skipped as ignored or as a --thorough oracle)."""
        ignored = check_id in self.env_ignores() and not any(
            check_id.startswith(f) for f in self.settings.forced
        )
        return not ignored and not (CHECKS[check_id].thorough and not self.settings.thorough)

    def _prepare(self, check_id: str) -> None:
        prepare = CHECKS[check_id].prepare
        if prepare is None:  # pragma: no cover - filtered by run_all
            return
        try:
            prepare(self.session)
        except Exception:  # the check then does the work itself, and reports what goes wrong there
            pass


def selected_checks(settings: Settings) -> list[str]:
    """Ids of the checks a run with ``settings`` executes (select / ignore applied)."""
    ids = [c.id for c in all_checks()]
    if settings.select:
        ids = [i for i in ids if any(i.startswith(s) for s in settings.select)]
    return [i for i in ids if not any(i.startswith(s) for s in settings.ignore)]


def _on_stand_ins(outcome: Outcome, note: str) -> Outcome:
    """``outcome`` marked as judged on stand-in items: its note and each finding's message say so."""
    outcome.stand_in = note
    outcome.note = f"{outcome.note}; {note}" if outcome.note else note
    outcome.findings = [dataclasses.replace(f, message=f"{f.message} ({note}.)") for f in outcome.findings]
    return outcome


def _crashed(label: str, check_id: str, exc: Exception) -> Outcome:
    """The outcome of a check that crashed: reported against the env, with what happened."""
    return Outcome(
        check_id,
        Status.FAILED,
        [
            Finding(
                check_id,
                f"running this check on {label} raised {type(exc).__name__}: {exc}",
                "see the message; if it points into hermes-envs itself, please report it.",
            )
        ],
    )
