"""Fault oracles (issue 29, faults): a judge outage scored against the judge's own answers (HC506), completions cut
off by the token limit scored like finished ones (HC507), and HC406 naming where a reply with no answer found its
credit. The mutants and their correct twins run in test_corpus; these prove the parts in between."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from hermes_envs.conformance import Outcome, Settings, Status
from hermes_envs.conformance._cases import Case
from hermes_envs.conformance._findings import Severity
from hermes_envs.conformance._replay import GONE, REPRODUCED, replay, write_counterexamples
from hermes_envs.conformance.checks.cutoff import _candidates

from .corpus import BAD, CORPUS_SETTINGS, GOOD, outcomes

BY_NAME = {p.name: p for p in BAD + GOOD}
ROOT = Path(__file__).resolve().parents[2]


def _outcome(name: str, check_id: str) -> Outcome:
    return next(o for o in outcomes(BY_NAME[name]) if o.check_id == check_id)


def test_a_case_keeps_the_judges_replies_through_json_and_old_cases_still_load() -> None:
    case = Case(
        rule="r",
        item={"q": 1},
        scripts={"a": [{"role": "assistant", "content": "x"}]},
        order=("a",),
        holds=(("a", ">", 0.2),),
        judge={"a": {"content": "", "fault": 500}},
    )
    data = json.loads(json.dumps(case.to_json()))
    assert Case.from_json(data) == case
    del data["judge"]
    assert Case.from_json(data).judge == {}
    assert "judge" not in Case.from_json(data).to_json()


def test_candidate_answers_use_the_tag_the_prompt_shows_numbers_first() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "Rate 1 to 5. Answer <rating>N</rating>."},
            {"role": "user", "content": "Review: fine."},
        ]
    }
    found = _candidates({"id": "r7", "stars": 4}, body)
    assert found[0] == "<rating>4</rating>"
    assert "<rating>r7</rating>" in found
    assert _candidates({"stars": 4}, {"messages": [{"role": "user", "content": "no tags"}]})[0] == "4"


def test_a_judge_outage_that_pays_a_refusal_is_an_error_that_replay_reproduces(tmp_path: Path) -> None:
    bad = BY_NAME["judge_outage_full_marks.py"]
    outcome = _outcome("judge_outage_full_marks.py", "HC506")
    assert outcome.status is Status.FAILED
    finding = outcome.findings[0]
    assert finding.severity is Severity.ERROR and "judge fails" in finding.message
    assert finding.counterexample and finding.counterexample["judge"]["judge down"]["fault"] == 500
    envs = [
        SimpleNamespace(path=str(bad), class_name="JudgeOutageFullMarksEnv", outcomes=list(outcomes(bad)))
    ]
    files = [
        f
        for f in write_counterexamples(envs, Settings(**CORPUS_SETTINGS), tmp_path)
        if json.loads(f.read_text())["check"] == "HC506"
    ]
    code, text = replay(files[0])
    assert code == REPRODUCED, text
    fixed = json.loads(files[0].read_text())
    fixed["env"], fixed["class"] = str(ROOT / "conformance/good/judge_env.py"), "JudgedQAEnv"
    (tmp_path / "fixed.json").write_text(json.dumps(fixed))
    code, text = replay(tmp_path / "fixed.json")
    assert code == GONE, text


def test_a_correct_judge_reward_with_its_own_fallback_passes_the_outage() -> None:
    """judge_env falls back to an exact match when the judge fails: the refusal still earns nothing."""
    assert _outcome("judge_env.py", "HC506").status is Status.PASSED


def test_ignoring_finish_reason_is_a_warning_and_an_error_only_when_the_envs_own_eval_reads_it() -> None:
    warned = _outcome("raw_atropos_env.py", "HC507")
    assert warned.status is Status.WARNED and all(f.severity is Severity.WARNING for f in warned.findings)
    failed = _outcome("cut_off_scored.py", "HC507")
    assert failed.status is Status.FAILED and "evaluate()" in failed.findings[0].message
    assert _outcome("raw_qa_env.py", "HC507").status is Status.PASSED


def test_a_reply_with_no_answer_earning_credit_names_where_the_credit_came_from() -> None:
    outcome = _outcome("reward_credits_finishing.py", "HC406")
    texts = [f.message for f in outcome.findings if f.severity is Severity.ERROR]
    assert any("holds no answer" in t and "absence of failure" in t for t in texts), texts


def test_a_raw_envs_judge_is_told_apart_from_its_rollouts_and_checked_too() -> None:
    """A raw env judges inside collect_trajectories: the requests quoting the rollout's reply are the judge's."""
    assert _outcome("raw_judge_env.py", "HC506").status is Status.PASSED
    failed = _outcome("raw_judge_neutral.py", "HC506")
    assert failed.status is Status.FAILED and "0.5" in failed.findings[0].message
    assert _outcome("raw_atropos_env.py", "HC506").status is Status.NOT_APPLICABLE


def test_only_an_eval_score_that_falls_makes_a_cut_off_an_error_not_a_truncation_count() -> None:
    """An env may count truncations in eval (a monitor) and still score them in training: no contradiction."""
    from hermes_envs.conformance.checks.cutoff import _fallen

    finished = ({"eval/accuracy": 0.5, "eval/truncated": 0.0},)
    assert _fallen(finished, ({"eval/accuracy": 0.5, "eval/truncated": 1.0},)) == []
    assert _fallen(finished, ({"eval/accuracy": 0.0, "eval/truncated": 1.0},)) == ["eval/accuracy 0.5 -> 0"]
    assert _fallen((), ({"eval/accuracy": 0.0},)) == []
