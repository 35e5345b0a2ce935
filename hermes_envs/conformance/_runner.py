"""Run the catalogue on env files without pytest (``hermes-envs check``), and the shared discovery/settings code.

The pytest plugin and the CLI find env files, read settings and run checks through the same functions here, so both
report the same findings.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hermes_envs.conformance.checks  # noqa: F401  (registers the catalogue of checks)
from hermes_envs.conformance._findings import Outcome, Status
from hermes_envs.conformance._registry import CHECKS
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._settings import Settings
from hermes_envs.conformance._targets import (
    discover,
    load_settings,
    parse_env_options,
    parse_overrides,
    refuse_report_over_input,
    split_target,
)


@dataclass
class EnvReport:
    """The outcomes of every check on one env class."""

    label: str
    outcomes: list[Outcome]
    seconds: float = 0.0
    #: Wall time per phase (import, construct, setup, items, evaluate, probes, rewards, gold, trajectories, ...).
    timings: dict[str, float] = field(default_factory=dict)
    #: The env file and class (what ``hermes-envs replay`` reruns a counterexample against).
    path: str = ""
    class_name: str = ""

    @property
    def failed(self) -> bool:
        return any(o.failed for o in self.outcomes)


@dataclass
class ConformanceReport:
    """The outcomes for every env in a run, with text / Markdown / JSON renderings."""

    envs: list[EnvReport] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(e.failed for e in self.envs)

    def to_text(self) -> str:
        lines = []
        for env in self.envs:
            lines.append(f"{env.label}  ({env.seconds:.1f} s)")
            if env.timings:
                lines.append("  time: " + ", ".join(f"{k} {v:.2f} s" for k, v in env.timings.items()))
            for o in env.outcomes:
                title = CHECKS[o.check_id].title if o.check_id in CHECKS else ""
                lines.append(
                    f"  {o.status.value.upper():<14} {o.check_id} {title}"
                    + (f" — {o.note}" if o.note else "")
                )
                for f in o.findings:
                    lines.extend("      " + line for line in f.render().splitlines())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "failed": self.failed,
            "envs": [
                {
                    "env": e.label,
                    "seconds": round(e.seconds, 3),
                    "timings": {k: round(v, 3) for k, v in e.timings.items()},
                    "checks": [
                        {
                            "id": o.check_id,
                            "title": CHECKS[o.check_id].title if o.check_id in CHECKS else "",
                            "status": o.status.value,
                            "note": o.note,
                            "findings": [
                                {
                                    "id": f.check_id,
                                    "severity": f.severity.value,
                                    "subject": f.subject,
                                    "message": f.message,
                                    "fix": f.fix,
                                }
                                for f in o.findings
                            ],
                        }
                        for o in e.outcomes
                    ],
                }
                for e in self.envs
            ],
        }

    def to_markdown(self) -> str:
        out = ["# hermes-envs conformance report", ""]
        for env in self.envs:
            out += [f"## {env.label}", "", "| check | status | finding |", "|---|---|---|"]
            for o in env.outcomes:
                text = (
                    "<br>".join(
                        f"{f.message} **Fix:** {f.fix}".replace("|", "\\|").replace("\n", " ")
                        for f in o.findings
                    )
                    or o.note
                )
                out.append(
                    f"| {o.check_id} {CHECKS[o.check_id].title if o.check_id in CHECKS else ''} "
                    f"| {o.status.value} | {text} |"
                )
            out.append("")
        return "\n".join(out)

    def write(self, path: str | Path) -> None:
        """Write the report as JSON (``.json``) or Markdown (anything else)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".json":
            path.write_text(json.dumps(self.to_dict(), indent=2), encoding="utf-8")
        else:
            path.write_text(self.to_markdown(), encoding="utf-8")


def env_sessions(path: Path, class_name: str | None, settings: Settings) -> list[EnvSession]:
    """The sessions of one target, as ``--hermes-conformance`` collects them: the named class, else one per env
    class of the file (one session when the file does not import or defines none: its HC101/HC102 say why)."""
    probe = EnvSession(path, class_name, settings)
    if class_name:
        return [probe]
    from hermes_envs.env import find_env_classes
    from hermes_envs.errors import EnvLoadError

    try:
        probe.load()
    except EnvLoadError:
        return [probe]
    names = [c.__name__ for c in find_env_classes(probe.module)]
    return [probe if n == probe.class_name else EnvSession(path, n, settings) for n in names]


def run_conformance(
    targets: list[str], settings: Settings | None = None, *, cli: bool = False
) -> ConformanceReport:
    """Run every selected check on every env class found in ``targets`` (every class of a file, as the pytest
    plugin does); findings are collected, never short-circuited."""
    settings = settings or load_settings()
    report = ConformanceReport()
    for path, wanted in discover(targets, cli=cli):
        if settings.contain:
            report.envs.extend(_contained_reports(path, wanted, settings))
            continue
        for session in env_sessions(path, wanted, settings):
            start = time.perf_counter()
            with session:
                outcomes = session.run_all()
                report.envs.append(
                    EnvReport(
                        session.label,
                        outcomes,
                        time.perf_counter() - start,
                        dict(session.timings),
                        path=str(session.path),
                        class_name=session.class_name or "",
                    )
                )
    return report


def _contained_reports(path: Path, wanted: str | None, settings: Settings) -> list[EnvReport]:
    """Every env class of one target, each run in its own container (the first also names the file's classes)."""
    from hermes_envs.conformance._contained import run_env_contained

    first = run_env_contained(path.resolve(), wanted, settings)
    runs = [first]
    if wanted is None and first.names:
        runs += [run_env_contained(path.resolve(), name, settings) for name in first.names[1:]]
    return [
        EnvReport(
            r.label,
            r.outcomes,
            r.seconds,
            dict(r.timings),
            path=str(path.resolve()),
            class_name=r.label.split("::", 1)[1] if "::" in r.label else (wanted or ""),
        )
        for r in runs
    ]


__all__ = [
    "ConformanceReport",
    "EnvReport",
    "Status",
    "discover",
    "env_sessions",
    "load_settings",
    "parse_env_options",
    "parse_overrides",
    "refuse_report_over_input",
    "run_conformance",
    "split_target",
]
