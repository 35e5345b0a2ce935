"""Findings: what a conformance check saw, and the outcome of running one check on one environment.

One message grammar everywhere: ``<subject> should <expectation>; got <value>.`` then ``Fix: <action>.``
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Blocked", "Finding", "NOT_SILENCEABLE", "NotApplicable", "Outcome", "Severity", "Skip", "Status"]


class Severity(str, enum.Enum):
    """An ``error`` fails the run (and the pytest item); a ``warning`` is reported but does not fail."""

    ERROR = "error"
    WARNING = "warning"


class Status(str, enum.Enum):
    """How running one check ended."""

    PASSED = "passed"
    FAILED = "failed"  # at least one error finding
    WARNED = "warned"  # only warning findings
    NOT_APPLICABLE = "not_applicable"  # the env does not use what the check is about
    SKIPPED = "skipped"  # a prerequisite check failed, so this one could not run


#: Checks whose failure means nothing else could run (the file does not import, or the env class is not there):
#: ignoring them hides the error without making the env runnable, so their findings offer no "Silence:" line.
NOT_SILENCEABLE = frozenset({"HC101", "HC102"})


@dataclass(frozen=True)
class Finding:
    """One problem: the check id, what was observed, and how to fix it."""

    check_id: str
    message: str
    fix: str
    severity: Severity = Severity.ERROR
    subject: str = ""  # the item, transcript or method the finding is about, when there is one
    #: A replayable counterexample (``_cases.Case.to_json()``) when the finding has one: written next to the
    #: report and rerun by ``hermes-envs replay``. Not part of the finding's identity.
    counterexample: dict[str, Any] | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        # Every finding is redacted where it is made, so no rendering or report (terminal, --report JSON/Markdown,
        # junit) can show a secret an env's error text carried (its OPENAI_API_KEY, a DB password).
        from hermes_envs.testing._redaction import redact_message

        for name in ("message", "fix", "subject"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, redact_message(value))

    def render(self) -> str:
        """The finding as an author reads it: id, severity, subject, message, fix, how to silence."""
        where = f" [{self.subject}]" if self.subject else ""
        text = f"{self.check_id} ({self.severity.value}){where}: {self.message}\n  Fix: {self.fix}"
        if self.check_id in NOT_SILENCEABLE:
            return text
        return (
            text
            + f'\n  Silence: add "{self.check_id}" to `ignore` under [tool.hermes-conformance] in pyproject.toml.'
        )


@dataclass
class Outcome:
    """The result of one check on one env: a status, the findings, and a note for skips / not-applicable."""

    check_id: str
    status: Status
    findings: list[Finding] = field(default_factory=list)
    note: str = ""
    seconds: float = 0.0
    #: When the check ran on stand-in items (setup() could not load the env's own data): the note saying so.
    stand_in: str = ""

    def __post_init__(self) -> None:
        from hermes_envs.testing._redaction import redact_message

        self.note = redact_message(self.note)

    @property
    def failed(self) -> bool:
        return self.status is Status.FAILED

    @classmethod
    def from_findings(cls, check_id: str, findings: list[Finding]) -> Outcome:
        if any(f.severity is Severity.ERROR for f in findings):
            status = Status.FAILED
        elif findings:
            status = Status.WARNED
        else:
            status = Status.PASSED
        return cls(check_id, status, list(findings))


class NotApplicable(BaseException):
    """Raised by a check when the env does not use what the check is about (e.g. no tools).

    A BaseException, like :class:`Skip`, so an ``except Exception`` in a check (or in the env's own code) never
    turns it into a crash report."""


class Skip(BaseException):
    """Raised by a check when a prerequisite failed, so it cannot say anything useful."""


class Blocked(Skip):
    """One cause that blocks many checks (the env cannot be constructed, its tools cannot be resolved): one check
    reports it as a finding, every other check it blocks is skipped with a note naming it ("needs X")."""

    def __init__(self, needs: str, cause: str, reported_by: str) -> None:
        super().__init__(f"needs {needs}, but {cause} (see {reported_by})")
        self.needs = needs
        self.cause = cause
        self.reported_by = reported_by
