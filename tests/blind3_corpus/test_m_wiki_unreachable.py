"""m_wiki_unreachable: a question's gold answer must be what its wiki page says, or a faithful answer scores 0."""

from __future__ import annotations

import re

from blind3_helpers import answer, build, load, transcript


async def _faithful_score(name: str) -> float:
    """Score of answering the buddy-programme question with exactly the page's words, citing the page."""
    env = build(name)
    await env.setup()
    item = next(i for i in env._items if "buddy programme" in i["q"])
    page = load(name).WIKI[item["doc"]]["text"]
    stated = re.search(r"buddy programme lasts ([^.]+)\.", page)
    assert stated is not None
    result = transcript(item["q"], answer(f"Answer: {stated.group(1)} [doc:{item['doc']}]"))
    return await env.compute_reward(item, result, None)


async def test_correct_env_credits_the_pages_answer() -> None:
    assert await _faithful_score("wiki_retrieval_env") == 1.0


async def test_mutant_gold_is_not_what_the_page_says() -> None:
    assert await _faithful_score("m_wiki_unreachable") == 0.2
