"""The findings of every known-bad env, snapshot-tested (syrupy) with volatile parts normalised.

Update after an intended wording change: `pytest tests/conformance/test_messages.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import Status

from .corpus import BAD, normalized, outcomes


def findings_text(path: Path) -> str:
    lines = []
    for outcome in outcomes(path):
        if outcome.status in (Status.FAILED, Status.WARNED):
            lines.extend(f.render() for f in outcome.findings)
    return normalized("\n".join(lines))


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_findings_of_a_bad_env(path: Path, snapshot) -> None:
    assert findings_text(path) == snapshot
