"""HC713 (evaluate() credits what training credits) blames only an eval grader that rejects every answer the
training reward credits: a stricter-looking grader that agrees, a judge it cannot answer for, and a report with no
grade in it are not errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Severity, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_ENV = """
import re, sys, time
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv, final_answer
from hermes_envs.tools import cleanup_sandbox


def grade(item, text):
{grade}


class GraderEnv(LetterCountEnv):
    name = "eval-grader"

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        correct = 0
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{{index}}-{{time.monotonic_ns()}}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            cleanup_sandbox(task_id)
            correct += {judge}grade(item, final_answer(result))
        await self.evaluate_log(
            metrics={{"{metric}": {value}}}, start_time=start, end_time=time.time()
        )
"""

#: case -> (grade's body, a judge request per item, the metric's name, HC713's status, its severity when failed)
CASES = {
    # its own code, the same rule as training (the last number of the reply): passes
    "same_rule": (
        "    numbers = re.findall(r'-?\\d+', text)\n    return bool(numbers) and numbers[-1] == item['answer']",
        False,
        "eval/accuracy",
        Status.PASSED,
        None,
    ),
    # a \\boxed{n} answer only: every answer training credits is wrong in eval
    "boxed_only": (
        "    found = re.findall(r'\\\\boxed\\{(-?\\d+)\\}', text)\n    return bool(found) and found[-1] == item['answer']",
        False,
        "eval/accuracy",
        Status.FAILED,
        Severity.ERROR,
    ),
    # the same grader, but the report names no grade (a count under an opaque name): only the kit's guess
    "boxed_only_unnamed": (
        "    found = re.findall(r'\\\\boxed\\{(-?\\d+)\\}', text)\n    return bool(found) and found[-1] == item['answer']",
        False,
        "eval/value",
        Status.WARNED,
        Severity.WARNING,
    ),
    # its own rule credits some right answers only (even counts): an item training credits is wrong in eval
    "even_only": (
        "    numbers = re.findall(r'-?\\d+', text)\n"
        "    return bool(numbers) and numbers[-1] == item['answer'] and int(item['answer']) % 2 == 0",
        False,
        "eval/accuracy",
        Status.FAILED,
        Severity.ERROR,
    ),
    # the same, reported so coarsely that no single item shows (passed when half are right): not judged
    "even_only_coarse": (
        "    numbers = re.findall(r'-?\\d+', text)\n"
        "    return bool(numbers) and numbers[-1] == item['answer'] and int(item['answer']) % 2 == 0",
        False,
        "eval/accuracy_coarse",
        Status.PASSED,
        None,
    ),
    # a judge asked about each reply: what the fake judge says proves nothing, so not judged
    "judged": (
        "    return False",
        True,
        "eval/accuracy",
        Status.SKIPPED,
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hc713_blames_only_a_grader_that_rejects_what_training_credits(case: str, tmp_path: Path) -> None:
    grade, judged, metric, expected, severity = CASES[case]
    judge = (
        "0 * len((await self.server.chat_completion(messages=[{'role': 'user', 'content': 'Judge: ' + "
        "final_answer(result)}], n=1)).choices) + "
        if judged
        else ""
    )
    env = tmp_path / f"{case}_env.py"
    value = "correct / len(self.eval_items)"
    if metric.endswith("_coarse"):
        value = f"float({value} >= 0.5)"
    env.write_text(_ENV.format(bad=str(CORPUS / "bad"), grade=grade, judge=judge, metric=metric, value=value))
    from hermes_envs.tools import registry

    with (
        registry.isolated(),
        EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC713"])) as session,
    ):
        outcome = session.run("HC713")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if severity is not None:
        (finding,) = outcome.findings
        assert finding.severity is severity
        assert "training reward" in finding.message and "score_rollout" in finding.fix
