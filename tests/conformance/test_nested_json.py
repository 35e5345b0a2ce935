"""HC413's nested-field relation: a reward whose JSON extraction cannot read nesting (a non-greedy `{.*?}` regex)
scores a complete answer below the same answer with its nested field left out; an error when the prompt asks for
that field, a warning when it does not (the record may hold more than was asked), and no finding once the reward
reads the whole object."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_BAD = (CORPUS / "bad" / "json_lazy_regex.py").read_text()
_PROMPT = '\'Extract a JSON object {"name": str, "age": int, "city": str, "address": {"street": str, "city": str}} \''

#: case -> (the env's source, HC413's outcome)
CASES = {
    "lazy_regex_field_asked": (_BAD, Status.FAILED),
    "lazy_regex_field_not_asked": (
        _BAD.replace(_PROMPT, "'Extract the person as a JSON object '"),
        Status.WARNED,
    ),
    "greedy_regex": (_BAD.replace(r'r"\{.*?\}"', r'r"\{.*\}"'), Status.PASSED),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_complete_json_answer_scores_at_least_one_missing_its_nested_field(
    case: str, tmp_path: Path
) -> None:
    source, expected = CASES[case]
    assert source != _BAD or case == "lazy_regex_field_asked"  # each replacement took
    env = tmp_path / f"{case}_env.py"
    env.write_text(f"import sys\nsys.path.insert(0, {str(CORPUS / 'bad')!r})\n" + source)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC413"])) as session:
        outcome = session.run("HC413")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is not Status.PASSED:
        (finding,) = outcome.findings
        assert finding.subject == "relation: a nested field" and "'address'" in finding.message
