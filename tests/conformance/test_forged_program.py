"""HC415: a reward that counts PASS lines in the output of a harness running the model's solution.py is fooled by
a solution that defines nothing and prints PASS; one that decides pass or fail in the env (exit status of asserts,
values compared env-side) is not, and a marker the prompt asks the program to print is never used to forge."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance.checks.forged_program import markers

from .corpus import CORPUS, CORPUS_SETTINGS

_BAD = (CORPUS / "bad" / "script_counts_pass.py").read_text()
_COUNT = 'return min(1.0, str(run.get("output", "")).count("PASS") / len(tests))'

#: case -> (the env's source, HC415's outcome)
CASES = {
    "counts_pass_lines": (_BAD, Status.FAILED),
    "exit_status_and_no_fail": (
        _BAD.replace(
            _COUNT,
            'out = str(run.get("output", ""))\n'
            '        return 1.0 if run.get("exit_code") == 0 and "FAIL" not in out and "PASS" in out else 0.0',
        ),
        Status.PASSED,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_program_that_only_prints_markers_earns_nothing(case: str, tmp_path: Path) -> None:
    source, expected = CASES[case]
    assert source != _BAD or case == "counts_pass_lines"  # each replacement took
    env = tmp_path / f"{case}_env.py"
    env.write_text(f"import sys\nsys.path.insert(0, {str(CORPUS / 'bad')!r})\n" + source)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC415"])) as session:
        outcome = session.run("HC415")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert "print('PASS')" in finding.message and finding.counterexample is not None


def test_markers_leave_out_what_the_task_asks_to_print_and_failure_words() -> None:
    source = (
        'HARNESS = "print(\'PASS\' if ok else \'FAIL\')"\nGREETING = "Hello, World!"\nDONE = "All good"\n'
    )
    found = markers(source, exclude="Write a program that prints Hello, World! and exits.")
    assert "PASS" in found and "All good" in found
    assert "Hello, World!" not in found  # the prompt asks for it: printing it is the task
    assert not any("FAIL" in m for m in found)
