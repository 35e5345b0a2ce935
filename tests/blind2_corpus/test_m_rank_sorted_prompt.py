"""m_rank_sorted_prompt: the gold list is sorted in place, so the prompt shows the entities already in the answer
order and copying the prompt's list scores full marks."""

from __future__ import annotations

import re
from typing import Any

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


def _echo(body: dict[str, Any]) -> dict[str, Any]:
    """Repeat the prompt's bullet list as the numbered answer, without knowing anything about the entities."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    names = re.findall(r"^- (.+)$", prompt, re.MULTILINE)
    return {"content": "\n".join(f"{n}. {name}" for n, name in enumerate(names, 1))}


async def _echo_scores(stem: str) -> list[float]:
    module = load(stem)
    scores = []
    for item in module._make_items()[:6]:
        with FakeOpenAIServer(policy=_echo) as server:
            scores += await group_scores(module, "RankingEnv", server, item, group_size=1)
    return scores


async def test_copying_the_prompt_order_scores_full_on_the_mutant() -> None:
    assert await _echo_scores("m_rank_sorted_prompt") == [1.0] * 6
    assert sum(await _echo_scores("ranking_env")) < 6 * 0.8  # shown in random order on the base
