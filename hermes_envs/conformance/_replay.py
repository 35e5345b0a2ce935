"""Counterexamples written next to a report, and ``hermes-envs replay FILE``: rerun one error finding.

Every error finding of a ``hermes-envs check --report DIR/report.json`` run is written as ``DIR/<env>-<check>-<n>.
json``: the env file and class, the run's settings, the finding, and its counterexample when the check has one
(:class:`~hermes_envs.conformance._cases.Case`: the item, the model's turns, the comparisons of their scores).
Replaying plays that counterexample again against the env and says whether the violation still holds; a finding
without one (a structural rule, say) is replayed by running its check again on the env.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hermes_envs.conformance._findings import Severity, Status
from hermes_envs.conformance._settings import Settings

__all__ = ["replay", "write_counterexamples"]

#: Exit codes of ``hermes-envs replay``: the violation is there again / it no longer reproduces.
REPRODUCED, GONE = 1, 0


def write_counterexamples(envs: Iterable[Any], settings: Settings, folder: str | Path) -> list[Path]:
    """Write one JSON file per error finding of ``envs`` (the runner's EnvReports) into ``folder``."""
    folder = Path(folder)
    written: list[Path] = []
    for env in envs:
        path, class_name = getattr(env, "path", ""), getattr(env, "class_name", "")
        if not path:
            continue
        stem = re.sub(r"[^\w.-]+", "_", f"{Path(path).stem}-{class_name}" if class_name else Path(path).stem)
        for outcome in env.outcomes:
            if outcome.status is not Status.FAILED:
                continue
            errors = [f for f in outcome.findings if f.severity is Severity.ERROR]
            for index, finding in enumerate(errors, 1):
                data = {
                    "env": str(path),
                    "class": class_name,
                    "check": finding.check_id,
                    "settings": dataclasses.asdict(settings),
                    "finding": {"subject": finding.subject, "message": finding.message, "fix": finding.fix},
                    "counterexample": finding.counterexample,
                }
                target = folder / f"{stem}-{finding.check_id}-{index}.json"
                folder.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(data, indent=2, default=repr), encoding="utf-8")
                written.append(target)
    return written


def replay(file: str | Path) -> tuple[int, str]:
    """Rerun the finding stored in ``file``: ``(REPRODUCED, what was seen)`` or ``(GONE, what was seen)``."""
    # The catalogue: a finding without a counterexample is replayed by running its check, and a fresh
    # `hermes-envs replay` process has not registered any (every such replay raised KeyError: 'HC...').
    import hermes_envs.conformance.checks  # noqa: F401
    from hermes_envs.conformance._cases import Case, run_case
    from hermes_envs.conformance._observations.training import SetupRun
    from hermes_envs.conformance._session import EnvSession

    data = json.loads(Path(file).read_text(encoding="utf-8"))
    known = {f.name for f in dataclasses.fields(Settings)}
    settings = Settings(**{k: v for k, v in (data.get("settings") or {}).items() if k in known})
    check_id = str(data["check"])
    with EnvSession(data["env"], data.get("class") or None, settings) as session:
        stored = data.get("counterexample")
        if stored:
            case = Case.from_json(stored)
            session.observe(SetupRun)
            run = run_case(session, case)
            holds = " and ".join(f"{a} {op} {b}" for a, op, b in case.holds)
            if run.violated:
                return REPRODUCED, (
                    f"{check_id} reproduces: {case.rule} is violated again ({holds}); scores: {run.describe()}."
                )
            return GONE, (
                f"{check_id} no longer reproduces: {case.rule} holds now (wanted {holds} for a violation); "
                f"scores: {run.describe()}."
            )
        outcome = session.run(check_id)
        errors = [f for f in outcome.findings if f.severity is Severity.ERROR]
        if errors:
            return REPRODUCED, f"{check_id} reproduces (the check run again):\n" + "\n".join(
                f.render() for f in errors
            )
        return GONE, f"{check_id} no longer reproduces: the check run again ended {outcome.status.value}."
