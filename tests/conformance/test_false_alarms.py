"""False alarms the calibrated-severity rule removes (issue #29): evidence a correct env of some shape can produce
is a warning, never an error. The corpus envs of conformance/good (rubric_judge_env, eval_only_refusing_env,
templated_quiz_env) guard the session-level cases; these tests guard the rules themselves and the raw-env case
whose outcome depends on the installed atroposlib/transformers pair."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._observations.origin import ProbeOrigin
from hermes_envs.conformance._observations.scoring import ScoredRollout
from hermes_envs.conformance.checks.answers import renderings
from hermes_envs.conformance.checks.data import _body, same_problem
from hermes_envs.conformance.checks.reward_contract import judged_raise

from .corpus import CORPUS, CORPUS_SETTINGS


def test_templated_questions_with_different_numbers_are_different_problems() -> None:
    """ "atomic number 3" vs "atomic number 12" once collapsed into one problem (HC202 error on a correct quiz)."""
    assert same_problem("Which element has atomic number 3?") != same_problem(
        "Which element has atomic number 12?"
    )
    assert same_problem("Is issue #4 open?") != same_problem("Is issue #9 open?")


def test_a_leading_number_label_is_not_part_of_the_problem() -> None:
    assert _body("Problem 101: How many e's in 'letter'?") == _body("Problem 1: How many e's in 'letter'?")
    assert _body("Q3. What is 3+4?") == "What is 3+4?"
    assert same_problem("problem 7 - What is 3+4?") == same_problem("Problem 101: what is 3+4")


def test_bold_markup_is_a_guess_and_case_of_a_number_is_not() -> None:
    """Markup around the value may be refused by an answer format the prompt fixes: never strict (an error)."""
    by_what = {what: strict for what, _text, strict in renderings("-390.43")}
    assert by_what["in bold markup"] is False
    assert by_what["with a trailing zero"] is True


def test_a_raise_after_the_rewards_own_judge_call_is_no_evidence_unless_it_is_a_bug_type() -> None:
    """The kit scripts the judge's reply: a ValueError parsing it says nothing about the env (HC402 warning); a
    TypeError is a bug whatever the reply; with no model call the raise came from the transcript (an error)."""

    def raised(exc: BaseException, requests: int) -> ScoredRollout[ProbeOrigin]:
        origin = ProbeOrigin("refusal", "a refusal")
        return ScoredRollout(
            item={}, result=None, task_id="t", origin=origin, exc=exc, model_requests=requests
        )

    assert judged_raise(raised(ValueError("not a score: 'I don't know.'"), 1))
    assert judged_raise(raised(RuntimeError("judge reply is not a 0-10 score"), 1))
    assert not judged_raise(raised(TypeError("'NoneType' object is not subscriptable"), 1))
    assert not judged_raise(raised(AttributeError("'dict' object has no attribute 'content'"), 1))
    assert not judged_raise(raised(ValueError("could not convert"), 0))


def _library_tokenizer_broken() -> bool:
    """Whether the installed atroposlib's tokenize_for_trainer returns non-list tokens (transformers >= 5)."""
    from atroposlib.utils.tokenize_for_trainer import tokenize_for_trainer
    from transformers import AutoTokenizer

    from hermes_envs.testing.offline import offline_tokenizer_path

    tokenizer = AutoTokenizer.from_pretrained(offline_tokenizer_path())
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
    tokens = tokenize_for_trainer(tokenizer, chat)["tokens"]
    return not (isinstance(tokens, list) and all(isinstance(t, int) for t in tokens))


@pytest.mark.slow
def test_a_raw_env_using_atroposlibs_own_tokenizer_is_never_blamed(tmp_path: Path) -> None:
    """A raw BaseEnv building tokens with atroposlib's tokenize_for_trainer is correct; under transformers >= 5
    that function returns a BatchEncoding, an installation problem: HC501 says so as a warning with the versions
    (it was an error on the env), and the mask check built on the group skips instead of failing."""
    source = (CORPUS / "good" / "raw_qa_env.py").read_text()
    start = source.index("    def encode(self, messages):")
    end = source.index("    async def collect_trajectory(")
    source = (
        source[:start]
        + (
            "    def encode(self, messages):\n"
            "        out = tokenize_for_trainer(self.tokenizer, messages)\n"
            "        return out['tokens'], out['masks']\n\n"
        )
        + source[end:]
    )
    source = source.replace(
        "from atroposlib.envs.base import",
        "from atroposlib.utils.tokenize_for_trainer import tokenize_for_trainer\nfrom atroposlib.envs.base import",
    )
    path = tmp_path / "raw_library_tokens_env.py"
    path.write_text(source)
    with EnvSession(path, settings=Settings(**CORPUS_SETTINGS)) as session:
        outcomes = {o.check_id: o for o in session.run_all()}
    errors = {k: [f.render() for f in o.findings] for k, o in outcomes.items() if o.status is Status.FAILED}
    assert not errors, errors
    if _library_tokenizer_broken():
        hc501 = outcomes["HC501"]
        assert hc501.status is Status.WARNED
        text = hc501.findings[0].message + hc501.findings[0].fix
        assert "transformers" in text and "transformers<5" in text and "installation" in text
        assert outcomes["HC502"].status is Status.SKIPPED
    else:
        assert outcomes["HC501"].status is Status.PASSED


_ONE_TIME_TRAIN_WRITE = '''
import sys
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv


class LateRolloutEnv(LetterCountEnv):
    """Correct; the first evaluate() coincides with one training rollout finishing (a rollout an earlier probe left
    running lands in the train buffer then, and only then)."""

    name = "late-rollout"
    _late = True
    _logged = False

    async def wandb_log(self, wandb_metrics=None):
        self._logged = True
        await super().wandb_log(wandb_metrics)

    async def evaluate(self, *args, **kwargs):
        if self._logged and self._late:  # the first evaluate() measured between two logs
            self._late = False
            self.tool_error_buffer.append(0)
        return await super().evaluate(*args, **kwargs)
'''


def test_a_train_metric_that_moves_during_one_evaluate_only_is_not_blamed_on_evaluate(tmp_path: Path) -> None:
    """HC705 once warned on a correct env in CI: a rollout finishing during the measured evaluate() added
    train/tool_errors_count. A finding must replay: a second evaluate() has to move the same metrics."""
    env = tmp_path / "late_rollout_env.py"
    env.write_text(_ONE_TIME_TRAIN_WRITE.format(bad=str(CORPUS / "bad")))
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC705"])) as session:
        outcome = session.run("HC705")
    assert outcome.status is Status.PASSED, outcome.findings


_SLOW_CONSTRUCTOR = '''
import sys
import time
sys.path.insert(0, {bad!r})
from _good import RawSumEnv


class SlowInitEnv(RawSumEnv):
    """Correct; building it is slow (a big tokenizer, say), its setup() is instant."""

    name = "slow-init"

    def __init__(self, *args, **kwargs):
        time.sleep(2.5)
        super().__init__(*args, **kwargs)
'''


def test_building_the_env_is_not_counted_as_setup_time(tmp_path: Path) -> None:
    """HC205 timed setup() from before the env was constructed: on a loaded CI machine raw_ties_env's instant
    setup() was reported as taking 5 s."""
    env = tmp_path / "slow_init_env.py"
    env.write_text(_SLOW_CONSTRUCTOR.format(bad=str(CORPUS / "bad")))
    settings = Settings(**{**CORPUS_SETTINGS, "setup_seconds": 2.0}, select=["HC205"])
    with EnvSession(env, settings=settings) as session:
        outcome = session.run("HC205")
    assert outcome.status is Status.PASSED, outcome.findings


def test_a_control_that_earns_credit_on_some_items_only_is_a_warning() -> None:
    """blind3's support desk (correct): on a ticket that needs no refund, doing nothing earns the refund part of
    the score, so the empty reply averaged 0.35 and HC406 failed the env. Credit on SOME items is a task where
    inaction can be right; credit on every item stays an error (reward_credits_finishing in conformance/bad)."""
    env = CORPUS / "blind3" / "support_desk_env.py"
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC406"])) as session:
        outcome = session.run("HC406")
    assert outcome.status is Status.WARNED, outcome.findings
    assert all("depends on the item" in f.message for f in outcome.findings if "empty_reply" in f.subject)


def test_an_env_serving_exactly_its_eval_items_for_training_is_a_warning() -> None:
    """blind3's eval-only benchmark (correct) cycles its eval items through get_next_item for `process` dumps; HC202
    failed it. Train and eval being one list is a benchmark or a missing split (a guess): a warning. A split that
    leaks part of the eval set stays an error (eval_is_train in conformance/bad)."""
    env = CORPUS / "blind3" / "short_answer_bench_env.py"
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC202"])) as session:
        outcome = session.run("HC202")
    assert outcome.status is Status.WARNED, outcome.findings


def test_a_glob_in_a_shell_command_is_not_an_absolute_path() -> None:
    """blind3's file-tree env (correct) lists the sandbox with `find . -not -path '*/.*'`; HC604 read '/.' out of
    the pattern as one absolute path shared by every task and failed the env."""
    from hermes_envs.conformance._ctxpaths import absolute_paths

    assert absolute_paths("find . -type f -not -path '*/.*' | sort") == []
    assert absolute_paths("ls /. /..") == []
    assert absolute_paths("cat /tmp/work/out && python3 /srv/grade.py") == ["/tmp/work/out", "/srv/grade.py"]


def test_an_eval_that_samples_on_purpose_is_a_warning() -> None:
    """Upstream's terminalbench_2 and tblite evaluate at agent_temperature on purpose (pass@1 over samples); HC702
    failed them. A hot eval is guidance the author may decline, not a rule every correct env obeys."""
    env = CORPUS / "bad" / "eval_hot.py"
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC702"])) as session:
        outcome = session.run("HC702")
    assert outcome.status is Status.WARNED, outcome.findings
    assert "silence HC702" in outcome.findings[0].fix


_BURNS_ON_LONG_REPLIES = """
import time

from element_quiz_env import ElementQuizEnv as _Quiz


class CostlyQuizEnv(_Quiz):
    name = "costly-quiz"

    async def compute_reward(self, item, result, ctx):
        text = result.messages[-1].get("content") or ""
        if len(text) > 1000:  # as slow on half a long reply as on all of it: no reply length is safe
            start = time.thread_time()
            while time.thread_time() - start < {burn}:
                pass
        return await super().compute_reward(item, result, ctx)
"""


@pytest.mark.slow  # scores three 40,000-character replies twice on one item or more
def test_a_reward_whose_cost_falls_with_the_reply_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """blind's element quiz (correct) reads `<answer>(.*?)</answer>`, which rescans the text from each open tag:
    quadratic, about 5 s of CPU on 5,000 open tags under load, and HC413 failed the env. Half the reply costs a
    quarter: the env's token budget may keep real replies cheap, so it is a warning. The bound is set from this
    machine's own cost of that regex, so the test does not depend on the CPU's speed."""
    import re
    import time

    from hermes_envs.conformance.checks import reward_cost

    tag = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)

    def one_scan() -> float:
        start = time.thread_time()
        tag.findall("<answer>" * 5_000)
        return time.thread_time() - start

    # The kit scores each reply twice (HC404), so the full reply costs two scans (twice the bound) and half the reply
    # two quarter-scans (half the bound): a factor of two either side absorbs a loaded machine's noise. (A bound of
    # half a scan put the half reply exactly on it, and CI's overhead tipped it over.)
    monkeypatch.setattr(reward_cost, "COST_CPU_SECONDS", sorted(one_scan() for _ in range(3))[1])
    env = CORPUS / "blind" / "element_quiz_env.py"
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC413"])) as session:
        outcome = session.run("HC413")
    costs = [f for f in outcome.findings if f.subject == "relation: cost on a hostile reply"]
    assert costs and outcome.status is Status.WARNED, outcome.findings
    assert "the cost falls with the reply's length" in costs[0].message


@pytest.mark.slow  # burns a bounded amount of CPU per long reply
def test_a_reward_as_slow_on_half_the_reply_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_envs.conformance.checks import reward_cost

    monkeypatch.setattr(reward_cost, "COST_CPU_SECONDS", 0.2)
    env = tmp_path / "costly_quiz_env.py"
    env.write_text(_BURNS_ON_LONG_REPLIES.replace("{burn}", "0.4"))
    monkeypatch.syspath_prepend(str(CORPUS / "blind"))
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC413"])) as session:
        outcome = session.run("HC413")
    assert outcome.status is Status.FAILED, outcome.findings
    assert any(f.subject == "relation: cost on a hostile reply" for f in outcome.findings)
