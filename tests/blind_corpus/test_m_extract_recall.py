"""m_extract_recall: partial credit is recall only, so listing every word of the text as an "address" finds all
the real ones and earns full credit; precision (junk) costs nothing."""

from __future__ import annotations

from .conftest import answer, group_scores, prepared


def pick(env):
    return next(i for i in env._items if i["emails"])


async def test_m_extract_recall() -> None:
    item = pick(await prepared("entity_extraction_env.py"))
    dump = answer("EMAILS:\n" + "\n".join(item["text"].split()))
    correct, _ = await group_scores("entity_extraction_env.py", dump, pick)
    mutant, _ = await group_scores("m_extract_recall.py", dump, pick)
    assert correct[0] < 0.5
    assert mutant == [1.0, 1.0]
