"""m_logcount_example_leak: the prompt's format example is the item's own answer, so copying it scores full marks
without reading the log."""

from __future__ import annotations

import json
import re

import pytest
from blind5_helpers import group_scores, ready


def copy_the_example(prompt: str) -> list[dict]:
    """A policy that never counts: it saves the last JSON object the prompt shows."""
    example = re.findall(r"\{[^{}]*\}", prompt)[-1]
    return [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "status_counts.json", "content": example}}
            ]
        },
        {"content": "Saved."},
    ]


@pytest.mark.parametrize(("name", "leaks"), [("logcount_env", False), ("m_logcount_example_leak", True)])
async def test_copying_the_prompt_example_does_not_score(name: str, leaks: bool) -> None:
    env = await ready(name)
    item = env.train_items[0]
    prompt = env.format_prompt(item)
    assert (json.dumps(item["counts"]) in prompt) is leaks
    scores = await group_scores(name, item, copy_the_example(prompt))
    assert (scores == [1.0, 1.0]) is leaks, scores
