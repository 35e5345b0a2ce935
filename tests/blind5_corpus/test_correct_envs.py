"""Each correct env of conformance/blind5/ scores a good group as expected, through the real agent loop on a scripted
fake model (loopback only): a right rollout scores 1.0 and a wrong one less, so the group carries a signal."""

from __future__ import annotations

import json

import pytest
from blind5_helpers import (
    group_scores,
    judged_policy,
    ledger_plan,
    load,
    paid_without_top_up,
    ready,
    write_file_turn,
)

DONE = {"content": "Saved the file."}


async def good_group_logcount_env() -> None:
    env = await ready("logcount_env")
    item = env.train_items[0]
    right = json.dumps(item["counts"])
    wrong_counts = dict(item["counts"])
    first = next(iter(wrong_counts))
    wrong_counts[first] += 1
    good = [write_file_turn("status_counts.json", right), DONE]
    assert await group_scores("logcount_env", item, good) == [1.0, 1.0]
    off_by_one = [write_file_turn("status_counts.json", json.dumps(wrong_counts)), DONE]
    expected = (len(item["counts"]) - 1) / len(item["counts"])
    assert await group_scores("logcount_env", item, off_by_one) == [pytest.approx(expected)] * 2
    assert await group_scores("logcount_env", item, [{"content": "The counts are done."}]) == [0.0, 0.0]


async def good_group_hidden_tests_env() -> None:
    env = await ready("hidden_tests_env")
    item = env.train_items[1]  # count_vowels
    right = [write_file_turn("solution.py", item["reference"]), {"content": "Saved solution.py."}]
    assert await group_scores("hidden_tests_env", item, right) == [1.0, 1.0]
    lower_only = (
        "def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)\n"  # fails the 'AEIOU' case only
    )
    partial = [write_file_turn("solution.py", lower_only), {"content": "Saved solution.py."}]
    assert await group_scores("hidden_tests_env", item, partial) == [0.75, 0.75]
    assert await group_scores("hidden_tests_env", item, [{"content": "def count_vowels(s): ..."}]) == [
        0.0,
        0.0,
    ]


async def good_group_summary_judge_env() -> None:
    env = await ready("summary_judge_env")
    item = env.train_items[0]  # the payments database report
    good = "Payments DB ran out of disk; writes failed for 25 minutes, no data was lost, and disk alerts are coming."
    assert await group_scores("summary_judge_env", item, judged_policy(good, "SCORE: 9")) == [0.9, 0.9]
    # The judge hedges instead of scoring: the key facts decide (all four are covered).
    assert await group_scores("summary_judge_env", item, judged_policy(good, "Looks fine to me.")) == [
        1.0,
        1.0,
    ]
    rambling = good + " " + "It was a long night for everyone involved in the incident response." * 3
    assert await group_scores("summary_judge_env", item, judged_policy(rambling, "SCORE: 9")) == [0.45, 0.45]


async def good_group_ledger_env() -> None:
    env = await ready("ledger_env")
    item = await env.get_next_item()
    case = item["case"]
    assert await group_scores("ledger_env", item, ledger_plan(case)) == [1.0, 1.0]
    short = paid_without_top_up(case)
    assert short < 1.0
    assert await group_scores("ledger_env", item, ledger_plan(case, top_up=False)) == [short, short]
    assert await group_scores("ledger_env", item, [{"content": f"Paid everything for case {case}."}]) == [
        0.0,
        0.0,
    ]
    assert load("ledger_env").LEDGERS == {}  # every rollout's ledger was graded and released


async def good_group_dates_env() -> None:
    env = await ready("dates_env")
    item = await env.get_next_item()
    right = f"I checked with the terminal. <answer>{item['answer']}</answer>"
    assert await group_scores("dates_env", item, [{"content": right}]) == [1.0, 1.0]
    assert await group_scores("dates_env", item, [{"content": "<answer>not sure</answer>"}]) == [0.1, 0.1]
    assert await group_scores("dates_env", item, [{"content": item["answer"]}]) == [0.0, 0.0]


CASES = {
    "logcount_env": good_group_logcount_env,
    "hidden_tests_env": good_group_hidden_tests_env,
    "summary_judge_env": good_group_summary_judge_env,
    "ledger_env": good_group_ledger_env,
    "dates_env": good_group_dates_env,
}


@pytest.mark.parametrize("env_name", sorted(CASES))
async def test_good_group_scores_as_expected(env_name: str) -> None:
    """A right group scores 1.0, a partly right one its share, a do-nothing one 0.0 (see each case above)."""
    await CASES[env_name]()
