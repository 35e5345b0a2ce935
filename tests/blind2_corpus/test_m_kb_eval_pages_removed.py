"""m_kb_eval_pages_removed: setup() removes the eval questions' pages from the knowledge base, so no eval question
can be answered from it and eval measures nothing."""

from __future__ import annotations

import json

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load


async def _eval_pages_readable(stem: str) -> list[bool]:
    module = load(stem)
    with FakeOpenAIServer(script=[{"content": "unused"}]) as server:
        env = build(module.StationKBEnv, server.base_url)
        await env.setup()
    return ["error" not in json.loads(module.kb_read(item["doc"])) for item in env._eval_items]


async def test_no_eval_page_can_be_read_on_the_mutant() -> None:
    mutant = await _eval_pages_readable("m_kb_eval_pages_removed")
    assert mutant and not any(mutant)
    base = await _eval_pages_readable("station_kb_env")
    assert base and all(base)
