"""m_summary_judge_eval_no_length_cap: evaluate grades with the judge but without the word limit training enforces, so a
model that learned to ramble reads as well on eval as one that obeys the limit."""

from __future__ import annotations

from typing import Any

import pytest
from blind5_helpers import judged_policy, ready

from hermes_envs.testing.fake_server import FakeOpenAIServer

RAMBLING = " ".join(["The report describes what happened, why, and what will change next."] * 6)


@pytest.mark.parametrize(
    ("name", "capped"), [("summary_judge_env", True), ("m_summary_judge_eval_no_length_cap", False)]
)
async def test_eval_applies_the_training_word_limit(name: str, capped: bool) -> None:
    with FakeOpenAIServer(policy=judged_policy(RAMBLING, "SCORE: 8")) as srv:
        env = await ready(name, srv.base_url)
        logged: list[dict] = []

        async def capture(metrics: dict, **kwargs: Any) -> None:
            logged.append(metrics)

        env.evaluate_log = capture
        await env.evaluate()
        train = await env.grade(env.eval_items[0], RAMBLING)
        srv.assert_no_failures()
    assert train == pytest.approx(0.4)  # training halves an over-long summary in both
    assert logged[0]["eval/mean_score"] == pytest.approx(0.4 if capped else 0.8)
