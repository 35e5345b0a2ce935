"""m_json_prompt_amount_as_written: the prompt asks for the amount as written in the email ("$1,250.00") while the
reward wants a number, so a reply that follows the instructions to the letter can never score 1.0."""

from __future__ import annotations

import pytest
from blind4_helpers import answer, json_reply, ready, transcript


def follow_instructions(prompt: str, record: dict, money: str) -> dict:
    """The record as the prompt asks for it (a model that does exactly what it is told)."""
    if "amount exactly as written in the email" in prompt:
        return {**record, "amount": money}
    return record


@pytest.mark.parametrize(
    ("name", "expected"), [("m_json_prompt_amount_as_written", 6 / 7), ("json_extract_env", 1.0)]
)
async def test_following_the_prompt_loses_a_field(name: str, expected: float, ctx) -> None:
    env = await ready(name)
    item = env._items[0]
    prompt = env.format_prompt(item)
    money = next(w for w in item["email_text"].split() if w[:1] in "$€£").rstrip(",")
    reply = json_reply(follow_instructions(prompt, item["record"], money))
    assert await env.compute_reward(item, transcript(prompt, answer(reply)), ctx) == pytest.approx(expected)
