"""HC403 with the judge's top verdict: a reward that passes a 0-10 (or 0-100) judge grade on without rescaling
returns 10.0 once the judge answers "10"; the same reward dividing by the top of the scale stays in [0, 1]."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_BAD = (CORPUS / "bad" / "judge_raw_scale.py").read_text()

#: case -> (the env's source, HC403's outcome)
CASES = {
    "raw_grade": (_BAD, Status.FAILED),
    "grade_over_ten": (
        _BAD.replace("return float(grade)", "return min(1.0, float(grade) / 10)"),
        Status.PASSED,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_judge_grade_is_rescaled_into_zero_one(case: str, tmp_path: Path) -> None:
    source, expected = CASES[case]
    assert source != _BAD or case == "raw_grade"  # each replacement took
    env = tmp_path / f"{case}_env.py"
    env.write_text(f"import sys\nsys.path.insert(0, {str(CORPUS / 'bad')!r})\n" + source)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC403"])) as session:
        outcome = session.run("HC403")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert finding.subject == "judge scale" and "10.0" in finding.message
        assert finding.counterexample is not None
