"""pytest collection nodes for ``--hermes-conformance``: file -> env class -> one item per check id.

Each item runs its check on a shared :class:`EnvSession` (one per env class, opened on first use and closed when
pytest tears the class node down), so observations such as ``setup()`` or probe rollouts happen once per env.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hermes_envs.conformance.checks  # noqa: F401  (registers the catalogue of checks)
from hermes_envs.conformance._contained import ContainedSession
from hermes_envs.conformance._findings import Outcome, Status
from hermes_envs.conformance._registry import CHECKS, all_checks
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._stash import SETTINGS, TARGETS
from hermes_envs.errors import EnvLoadError

__all__ = [
    "ConformanceEnv",
    "ConformanceFailed",
    "ConformanceFile",
    "ConformanceItem",
    "ConformanceWarning",
    "REPORT_KEY",
    "finish_report",
    "outcome_record",
]


class ConformanceWarning(UserWarning):
    """A conformance finding of severity warning (reported, does not fail the run)."""


class ConformanceFailed(Exception):
    """Raised by a conformance item whose check found errors; pytest shows the findings, not a traceback."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.check_id)
        self.outcome = outcome


def _settings(config: pytest.Config) -> Any:
    return config.stash[SETTINGS]


class ConformanceFile(pytest.File):
    """An env file: one child per env class (or the import checks alone when the file cannot be imported)."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        wanted = self.config.stash[TARGETS].get(self.path.resolve())
        settings = _settings(self.config)
        if settings.contain:
            yield from self._collect_contained(wanted, settings)
            return
        probe = EnvSession(self.path, wanted, settings)
        try:
            probe.load()
        except EnvLoadError:
            # The file does not import or has no env class: its items report that (HC101/HC102), the rest skip.
            yield ConformanceEnv.from_parent(self, name=self.path.stem, env_session=probe)
            return
        from hermes_envs.env import find_env_classes

        classes = [c.__name__ for c in find_env_classes(probe.module)]
        for name in classes:
            if wanted and name != wanted:
                continue
            session = (
                probe if name == probe.class_name else EnvSession(self.path, name, _settings(self.config))
            )
            yield ConformanceEnv.from_parent(self, name=name, env_session=session)

    def _collect_contained(self, wanted: str | None, settings: Any) -> Iterator[pytest.Collector]:
        """The env classes, learned by importing the file in the container (its import-time code never runs in
        pytest's process); each class's checks then run in a container of their own."""
        from hermes_envs.conformance._contained import ContainedSession, contained_classes

        names, label = contained_classes(self.path, wanted, settings)
        if not names:
            session = ContainedSession(self.path, wanted, settings, label)
            yield ConformanceEnv.from_parent(self, name=self.path.stem, env_session=session)
            return
        for name in names:
            if wanted and name != wanted:
                continue
            session = ContainedSession(self.path, name, settings)
            yield ConformanceEnv.from_parent(self, name=name, env_session=session)


class ConformanceEnv(pytest.Collector):
    """One env class; owns its EnvSession for the duration of its items."""

    def __init__(self, *, env_session: EnvSession | ContainedSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.env_session = env_session

    def collect(self) -> Iterator[pytest.Item]:
        selected = set(self.env_session.selected())
        for info in all_checks():
            if info.id in selected:
                yield ConformanceItem.from_parent(self, name=f"{info.id}-{info.slug}", check_id=info.id)

    def teardown(self) -> None:
        self.env_session.close()


class ConformanceItem(pytest.Item):
    """One check on one env class."""

    def __init__(self, *, check_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check_id = check_id
        self.add_marker("hermes_conformance")

    @property
    def env_session(self) -> EnvSession | ContainedSession:
        assert isinstance(self.parent, ConformanceEnv)
        return self.parent.env_session

    def runtest(self) -> None:
        outcome = self.env_session.run(self.check_id)
        # Travels with the test report (also from xdist workers to the controller, which writes the report).
        self.user_properties.append((REPORT_KEY, outcome_record(self.env_session, outcome, self.config)))
        if outcome.status is Status.NOT_APPLICABLE:
            pytest.skip(f"{self.check_id} not applicable: {outcome.note}")
        if outcome.status is Status.SKIPPED:
            pytest.skip(f"{self.check_id} skipped: {outcome.note}")
        if outcome.status is Status.FAILED:
            raise ConformanceFailed(outcome)
        for finding in outcome.findings:
            warnings.warn(ConformanceWarning(finding.render()), stacklevel=1)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailed):
            findings = excinfo.value.outcome.findings
            return f"{self.env_session.label}\n" + "\n".join(f.render() for f in findings)
        return super().repr_failure(excinfo, style=style)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.check_id} {CHECKS[self.check_id].title}"


REPORT_KEY = "hermes_conformance"


def outcome_record(
    session: EnvSession | ContainedSession, outcome: Outcome, config: pytest.Config
) -> dict[str, Any]:
    """A JSON-able record of one outcome (xdist sends user_properties between processes)."""
    try:
        file = str(session.path.relative_to(config.rootpath))
    except ValueError:
        file = str(session.path)
    return {
        "env": session.label,
        "file": file,
        "check_id": outcome.check_id,
        "status": outcome.status.value,
        "note": outcome.note,
        "seconds": outcome.seconds,
        # The session's phase times so far (they only grow): the env's last record holds them all.
        "timings": dict(session.timings),
        "findings": [
            {
                "check_id": f.check_id,
                "message": f.message,
                "fix": f.fix,
                "severity": f.severity.value,
                "subject": f.subject,
            }
            for f in outcome.findings
        ],
    }


def _outcome_of(record: dict[str, Any]) -> Outcome:
    from hermes_envs.conformance._findings import Finding, Severity

    findings = [
        Finding(f["check_id"], f["message"], f["fix"], Severity(f["severity"]), f["subject"])
        for f in record["findings"]
    ]
    return Outcome(record["check_id"], Status(record["status"]), findings, record["note"], record["seconds"])


def finish_report(config: pytest.Config, records: list[dict[str, Any]], path: str | None) -> None:
    """Write ``--hermes-report`` and, on GitHub Actions, one annotation per error finding."""
    from hermes_envs.conformance._runner import ConformanceReport, EnvReport

    by_env: dict[str, list[Outcome]] = {}
    files: dict[str, str] = {}
    timings: dict[str, dict[str, float]] = {}
    for record in records:
        by_env.setdefault(record["env"], []).append(_outcome_of(record))
        files[record["env"]] = record["file"]
        latest = record.get("timings") or {}
        if sum(latest.values()) >= sum(timings.get(record["env"], {}).values()):
            timings[record["env"]] = latest
    for outcomes in by_env.values():
        outcomes.sort(key=lambda o: o.check_id)  # xdist may deliver them out of order
    # An env's time is the sum of its checks' times (the first check pays for import and setup), on any worker.
    report = ConformanceReport(
        [
            EnvReport(label, outs, sum(o.seconds for o in outs), timings.get(label, {}))
            for label, outs in sorted(by_env.items())
        ]
    )
    if path:
        report.write(path)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for env in report.envs:
            for outcome in env.outcomes:
                for f in outcome.findings:
                    level = "error" if f.severity.value == "error" else "warning"
                    file = files[env.label]
                    text = (
                        f"{f.message} Fix: {f.fix}".replace("%", "%25")
                        .replace("\r", "%0D")
                        .replace("\n", "%0A")
                    )
                    print(f"::{level} file={file},title={f.check_id}::{text}")
