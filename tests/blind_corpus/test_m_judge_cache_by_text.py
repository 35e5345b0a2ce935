"""m_judge_cache_by_text: judge verdicts are cached by the summary text alone, so the same words written for a
different passage reuse the first passage's score instead of being judged against their own passage."""

from __future__ import annotations

import re

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build

SUMMARY = "Officials announced a change that critics called unrealistic."


async def two_groups(name: str) -> tuple[list[float], list[float]]:
    probe = build(name, "http://127.0.0.1:9/v1")
    await probe.setup()
    first, second = probe._items[0], probe._items[1]
    script = {
        "scripts": {
            "^Summarize": {"turns": [{"content": SUMMARY}]},
            "^Passage:\\n" + re.escape(first["passage"]): {"turns": [{"content": "9"}]},
            "^Passage:\\n" + re.escape(second["passage"]): {"turns": [{"content": "2"}]},
        }
    }
    with FakeOpenAIServer(script=script) as server:
        env = build(name, server.base_url)
        await env.setup()
        a, _ = await env.collect_trajectories(first)
        b, _ = await env.collect_trajectories(second)
        server.assert_no_failures()
    return a["scores"], b["scores"]


async def test_m_judge_cache_by_text() -> None:
    assert await two_groups("summary_judge_env.py") == ([0.9, 0.9], [0.2, 0.2])
    assert await two_groups("m_judge_cache_by_text.py") == ([0.9, 0.9], [0.9, 0.9])
