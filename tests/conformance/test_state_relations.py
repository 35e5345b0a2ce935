"""HC413's state and hedging relations (issue 29): a score must not depend on get_next_item having moved on or on a
verdict cached for another item; a hedged answer or a partial ordered list must not keep full credit. The corpus
mutants (conformance/bad/) prove each relation fires; these tests pin the pieces the relations are built from."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hermes_envs.conformance import Settings, Status
from hermes_envs.conformance._cases import Case, advance_past, fetch_item
from hermes_envs.conformance._findings import Severity
from hermes_envs.conformance._observations.origin import GoldOrigin, TwinOrigin
from hermes_envs.conformance._observations.scoring import ScoredRollout
from hermes_envs.conformance._replay import REPRODUCED, replay, write_counterexamples
from hermes_envs.conformance.checks.metamorphic import _hedges, _render_like

from .corpus import BAD, CORPUS_SETTINGS, outcomes

BY_NAME = {p.name: p for p in BAD}


class _Cycle:
    """An env whose get_next_item hands out ``items`` in a cycle, counting the calls."""

    def __init__(self, items: list[Any]) -> None:
        self.items, self.calls = items, 0

    async def get_next_item(self) -> Any:
        item = self.items[self.calls % len(self.items)]
        self.calls += 1
        return item


def _session(env: _Cycle) -> SimpleNamespace:
    return SimpleNamespace(run_env=lambda make, phase=None: asyncio.run(make(env)))


def _gold(text: str, value: str, template: str, kind: str = "scalar") -> ScoredRollout[GoldOrigin]:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": text}]
    return ScoredRollout(
        item={"q": "q"},
        result=SimpleNamespace(messages=messages),
        task_id="t",
        origin=GoldOrigin(f"field 'q' answered as {text!r}", "field", "q", value, template, kind),
        score=1.0,
    )


def _twin(value: str, template: str, kind: str = "scalar") -> ScoredRollout[TwinOrigin]:
    """The gold's shape written with another item's value (``value``), as GoldProbes scores it."""
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": template.format(v=value)}]
    return ScoredRollout(
        item={"q": "q"},
        result=SimpleNamespace(messages=messages),
        task_id="t",
        origin=TwinOrigin("field 'q' answered with a wrong value", "q", value, template, kind),
        score=0.0,
    )


def test_a_case_keeps_its_get_next_item_steps_and_judge_verdict_through_json() -> None:
    case = Case(
        rule="r",
        item={"a": 1},
        scripts={"x": [{"content": "1"}]},
        order=("x",),
        holds=(("requests:x", "==", 0),),
        advance=("x",),
        judge={"x": {"content": "7"}},
        fetch=("x",),
    )
    assert Case.from_json(json.loads(json.dumps(case.to_json()))) == case


def test_advance_past_calls_get_next_item_until_another_item_comes() -> None:
    env = _Cycle([{"n": 1}, {"n": 1}, {"n": 2}])
    assert advance_past(_session(env), {"n": 1}) == {"n": 2}
    assert env.calls == 3


def test_fetch_item_calls_get_next_item_until_the_item_comes_and_gives_up_on_a_stranger() -> None:
    env = _Cycle([{"n": 1}, {"n": 2}, {"n": 3}])
    assert fetch_item(_session(env), {"n": 3}) and env.calls == 3
    assert not fetch_item(_session(_Cycle([{"n": 1}])), {"n": 9})


def test_a_get_next_item_that_raises_leaves_the_case_to_score_instead_of_crashing_the_check() -> None:
    """Before: a raise from get_next_item (an env judged on stand-in items after setup failed) escaped run_case,
    and HC413 reported the kit's own crash as an error on the env."""

    class Broken(_Cycle):
        async def get_next_item(self) -> Any:
            raise RuntimeError("setup() did not run")

    assert advance_past(_session(Broken([])), {"n": 1}) is None
    assert fetch_item(_session(Broken([])), {"n": 1}) is False


def test_a_scalar_gold_is_hedged_only_as_two_committed_answers() -> None:
    """A grader that finds the answer's words anywhere in the reply credits "Paris or Rome" by design (the kit's own
    trivia envs do), so no prose hedge is built; two answers each in the answer shape ("Answer: 444" and "Answer:
    451") are, and the relation judges them only when the value in plain prose scores below the shaped answer."""
    hedges = _hedges(_gold("Answer: 444", "444", "Answer: {v}"), _twin("451", "Answer: {v}"))
    assert [(right, wrong) for _kind, right, wrong in hedges] == [
        ("Answer: 444\nAnswer: 451", "Answer: 451\nAnswer: 444")
    ]
    assert _hedges(_gold("444", "444", "{v}"), _twin("451", "{v}")) == []


def test_a_list_gold_is_hedged_with_another_items_entries_written_as_the_gold_was() -> None:
    gold = _gold("Answer: 1, 2, 4", json.dumps([1, 2, 4]), "Answer: {v}", kind="list")
    twin = _twin(json.dumps([1, 3]), "Answer: {v}", kind="list")
    kinds = {kind: (right, wrong) for kind, right, wrong in _hedges(gold, twin)}
    assert kinds["the right list with another item's entries added"] == (
        "Answer: 1, 2, 4, 3",
        "Answer: 3, 1, 2, 4",
    )
    assert _render_like(gold, [2, 1]) == "Answer: 2, 1"


@pytest.mark.parametrize(
    ("name", "subject"),
    [
        ("reward_current_item.py", "relation: get_next_item between rollout and reward"),
        ("judge_cache_by_text.py", "relation: a judge verdict reused for another item"),
        ("reward_list_superset.py", "relation: a hedged answer"),
        ("reward_partial_list.py", "relation: a partial list"),
    ],
)
def test_each_state_or_hedge_mistake_is_an_hc413_error_with_a_counterexample(name: str, subject: str) -> None:
    outcome = {o.check_id: o for o in outcomes(BY_NAME[name])}["HC413"]
    assert outcome.status is Status.FAILED
    errors = {f.subject: f for f in outcome.findings if f.severity is Severity.ERROR}
    assert subject in errors, [f.render() for f in outcome.findings]
    assert errors[subject].counterexample


@pytest.mark.slow
def test_the_current_item_counterexample_replays_on_a_fresh_env(tmp_path: Path) -> None:
    """`hermes-envs replay` reruns the counterexample on a fresh env: it fetches the item as the trainer did, scores,
    calls get_next_item, scores again, and the two scores differ again."""
    bad = BY_NAME["reward_current_item.py"]
    envs = [SimpleNamespace(path=str(bad), class_name="CurrentItemEnv", outcomes=list(outcomes(bad)))]
    files = write_counterexamples(envs, Settings(**CORPUS_SETTINGS), tmp_path)
    ours = [f for f in files if "get_next_item" in json.loads(f.read_text())["finding"]["subject"]]
    assert ours, files
    code, text = replay(ours[0])
    assert code == REPRODUCED, text
