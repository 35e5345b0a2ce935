"""HC413's relations on replies that are not the answer (unreadable, a piece of it), and answer shapes read from
the env's own prompt.

A reward that gives a reply it cannot parse a "neutral" score pays for broken output over an honest wrong answer;
the kit proves it around a gold it could only write in the fence the prompt asks for (```python), so both the
prompt's shape and the relation are exercised by one env and its correct twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_BAD = (CORPUS / "bad" / "expression_neutral_on_error.py").read_text()

#: case -> (the env's source, HC413's outcome)
CASES = {
    "neutral_on_error": (_BAD, Status.FAILED),
    "zero_on_error": (_BAD.replace("return 0.5  # could not", "return 0.0  # could not"), Status.PASSED),
    "neutral_equals_wrong": (
        _BAD.replace("return 0.5  # could not", "return 0.2  # could not").replace(
            "else 0.0\n", "else 0.2\n"
        ),
        Status.PASSED,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_unreadable_answer_earns_no_more_than_a_wrong_one(case: str, tmp_path: Path) -> None:
    source, expected = CASES[case]
    assert source != _BAD or case == "neutral_on_error"  # each replacement took
    env = tmp_path / f"{case}_env.py"
    env.write_text(f"import sys\nsys.path.insert(0, {str(CORPUS / 'bad')!r})\n" + source)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC413"])) as session:
        outcome = session.run("HC413")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert finding.subject == "relation: an unreadable answer"
        assert "((( ???" in finding.message and "0.5" in finding.message
        assert finding.counterexample is not None


_IN = (CORPUS / "bad" / "reply_in_answer.py").read_text()
_TEST = "return 1.0 if got and got in accepted(item) else 0.0"
#: case -> (the env's source, HC413's outcome)
PIECES = {
    "reply_in_answer_string": (_IN, Status.FAILED),
    "reply_equals_answer": (
        _IN.replace(
            _TEST,
            "want = accepted(item)\n        return 1.0 if got and (got in want if isinstance(want, list) else got == want) else 0.0",
        ),
        Status.PASSED,
    ),
    "prefix_accepted": (
        _IN.replace(_TEST, "return 1.0 if got and accepted(item).startswith(got) else 0.0"),
        Status.PASSED,
    ),
}


@pytest.mark.parametrize("case", sorted(PIECES))
def test_a_piece_of_the_answer_scores_below_the_whole(case: str, tmp_path: Path) -> None:
    source, expected = PIECES[case]
    assert source != _IN or case == "reply_in_answer_string"  # each replacement took
    env = tmp_path / f"{case}_env.py"
    env.write_text(f"import sys\nsys.path.insert(0, {str(CORPUS / 'bad')!r})\n" + source)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC413"])) as session:
        outcome = session.run("HC413")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert finding.subject == "relation: a piece of the answer"
        assert "'P'" in finding.message and "'s'" in finding.message
