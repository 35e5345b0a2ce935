"""Every family tool is bounded: a hanging backend ends with a ToolError in the rollout, a huge result is cut with
a marker and stays valid JSON."""

from __future__ import annotations

import json
import threading

import pytest

from hermes_envs.agent import HermesAgentLoop
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools import registry
from hermes_envs.tools.toolsets import ToolTimeoutError, _limits, bound_result, set_limits, use_backend

from .conftest import call


class HangingWeb:
    def __init__(self) -> None:
        self.release = threading.Event()

    def search(self, query: str, limit: int) -> dict:
        self.release.wait(30)
        return {"success": True, "data": {"web": []}}

    def extract(self, urls: list[str]) -> dict:
        return {
            "results": [{"url": u, "title": "big", "content": "x" * 300_000, "error": None} for u in urls]
        }


@pytest.fixture
def hanging() -> HangingWeb:
    backend = HangingWeb()
    use_backend("web", backend)
    saved = dict(_limits._overrides)
    set_limits(timeouts={"web": 0.3})
    yield backend
    backend.release.set()
    _limits._overrides.clear()
    _limits._overrides.update(saved)


def test_a_hanging_tool_raises_a_timeout_error_naming_the_limit(hanging: HangingWeb, task_id: str) -> None:
    with pytest.raises(ToolTimeoutError, match=r"'web_search' should finish within 0.3 s"):
        registry.dispatch("web_search", {"query": "x"}, task_id)


@pytest.mark.slow  # a fake server and the openai client: about 5 s
async def test_a_hanging_tool_becomes_a_tool_error_and_the_rollout_goes_on(
    hanging: HangingWeb, task_id: str
) -> None:
    script = [{"tool_calls": [{"name": "web_search", "arguments": {"query": "x"}}]}, {"content": "gave up"}]
    with FakeOpenAIServer(script=script) as server:
        from openai import AsyncOpenAI

        class Server:
            async def chat_completion(self, **kw):
                async with AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
                    kw.pop("n", None)
                    return await client.chat.completions.create(model="fake", **kw)

        schemas, names = registry.resolve(["web"])
        result = await HermesAgentLoop(Server(), schemas, names, task_id=task_id, max_turns=3).run(
            [{"role": "user", "content": "search"}]
        )
    assert result.finished_naturally and result.messages[-1]["content"] == "gave up"
    assert [e.tool_name for e in result.tool_errors] == ["web_search"]
    assert "ToolTimeoutError" in result.tool_errors[0].error


def test_a_huge_result_is_cut_with_a_marker_and_stays_json(hanging: HangingWeb, task_id: str) -> None:
    raw = registry.dispatch("web_extract", {"urls": ["https://a.invalid"]}, task_id)
    assert len(raw) <= _limits.max_result_chars()
    result = json.loads(raw)
    assert result["truncated"] is True
    assert "[... truncated by hermes-envs:" in result["results"][0]["content"]
    assert result["results"][0]["url"] == "https://a.invalid"


def test_bound_result_leaves_small_results_alone() -> None:
    assert json.loads(bound_result({"a": "b"})) == {"a": "b"}
    cut = bound_result("y" * 2000, limit=600)
    assert len(cut) <= 600 and "of 2000 characters kept" in cut


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        set_limits(timeouts={"web": 0})
    with pytest.raises(ValueError, match=">= 500"):
        set_limits(max_result_chars=10)


def test_unknown_arguments_are_refused_like_the_builtin_tools(task_id: str) -> None:
    with pytest.raises(TypeError, match=r"unexpected argument\(s\) \['q'\]"):
        call("web_search", task_id, q="x")
