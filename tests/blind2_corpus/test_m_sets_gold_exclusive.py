"""m_sets_gold_exclusive: the question says 'inclusive' but the gold range stops before its upper bound, so the right
answer loses credit whenever the upper bound itself belongs to the set."""

from __future__ import annotations

import re

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


def _right_answer(module, question: str) -> list[int]:
    """The set the question asks for, computed here from its text (inclusive bounds, as it says)."""
    lo, hi = map(int, re.findall(r"between (\d+) and (\d+)", question)[0])
    if "prime" in question:
        test = module._is_prime
    elif "square" in question:
        test = lambda x: int(x**0.5) ** 2 == x  # noqa: E731
    else:
        test = lambda x: str(x) == str(x)[::-1]  # noqa: E731
    return [x for x in range(lo, hi + 1) if test(x)]


async def _right_answer_score(stem: str) -> list[float]:
    module = load(stem)
    item = next(
        i
        for i in module._make_items()
        if i["kind"] in {"primes", "squares", "palindromes"}
        and _right_answer(module, i["question"])[-1:] == [int(re.findall(r"and (\d+)", i["question"])[0])]
    )
    answer = "Answer: " + ", ".join(map(str, _right_answer(module, item["question"])))
    with FakeOpenAIServer(script=[{"content": answer}]) as server:
        return await group_scores(module, "NumberSetsEnv", server, item)


async def test_the_right_inclusive_answer_loses_credit_on_the_mutant() -> None:
    assert all(score < 1.0 for score in await _right_answer_score("m_sets_gold_exclusive"))
    assert await _right_answer_score("number_sets_env") == [1.0, 1.0]
