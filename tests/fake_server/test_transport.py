"""In-process transport for clients that take an injected http_client (httpx2 for openai 3.x, httpx too)."""

from __future__ import annotations

import httpx
import openai

from hermes_envs._http_client import sdk_http_module
from hermes_envs.testing.fake_server import FakeOpenAIServer

SCRIPT = [{"tool_calls": [{"name": "terminal", "arguments": {"command": "ls"}}]}, {"content": "done"}]
TOOLS = [{"type": "function", "function": {"name": "terminal", "parameters": {"type": "object"}}}]
USER = [{"role": "user", "content": "q"}]


async def test_async_openai_in_process_without_starting_the_server():
    srv = FakeOpenAIServer(SCRIPT)
    client = srv.async_client(in_process=True)
    r = await client.chat.completions.create(model="f", messages=USER, tools=TOOLS)
    assert r.choices[0].message.tool_calls[0].function.name == "terminal"
    stream = await client.chat.completions.create(model="f", messages=USER, tools=TOOLS, stream=True)
    chunks = [c async for c in stream]
    streamed = [
        tc.function.name for c in chunks for tc in (c.choices[0].delta.tool_calls or []) if tc.function.name
    ]
    assert streamed == ["terminal"] and chunks[-1].choices[0].finish_reason == "tool_calls"
    assert srv.call_count == 2 and not srv.running
    srv.assert_no_failures()


def test_sync_openai_with_an_injected_httpx2_client():
    srv = FakeOpenAIServer(SCRIPT)
    http = sdk_http_module()  # httpx2 under openai 3.x, httpx under 1.x/2.x
    http_client = http.Client(transport=srv.transport(http))
    client = openai.OpenAI(base_url="http://anything/v1", api_key="x", http_client=http_client)
    assert client.chat.completions.create(model="f", messages=USER, tools=TOOLS).choices[0].message.tool_calls
    assert [m.id for m in client.models.list()] == ["fake"]


def test_plain_httpx_transport_and_misses_recorded():
    srv = FakeOpenAIServer(SCRIPT)
    with httpx.Client(transport=srv.transport(httpx), base_url="http://fake") as c:
        r = c.post("/v1/chat/completions", json={"model": "f", "messages": USER})
        assert r.status_code == 409  # tools not offered: a miss
    assert len(srv.failures) == 1
