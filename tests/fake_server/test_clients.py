"""Client kinds and process boundaries: aiohttp on the chat route, plain httpx (openai 2.x's HTTP stack) through the
in-process transport, and a client in another process against a server started in the test."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import aiohttp
import httpx
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
USER = [{"role": "user", "content": "q"}]
CALL = {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}]}
SCRIPT = [CALL, {"content": "The answer is 42."}]


def _sse_events(raw: str) -> list[dict]:
    """The JSON events of an SSE body, checking it ends with ``[DONE]`` like OpenAI's."""
    datas = [line[len("data: ") :] for line in raw.split("\n") if line.startswith("data: ")]
    assert datas[-1] == "[DONE]", datas[-1:]
    return [json.loads(d) for d in datas[:-1]]


def _assert_streamed_tool_call(events: list[dict]) -> None:
    deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
    args = "".join(tc["function"]["arguments"] for d in deltas for tc in d.get("tool_calls", []))
    names = [tc["function"].get("name") for d in deltas for tc in d.get("tool_calls", [])]
    assert json.loads(args) == {"command": "echo 42"} and "terminal" in names
    assert [e["choices"][0]["finish_reason"] for e in events if e["choices"]][-1] == "tool_calls"


# ---------------------------------------------------------------------------------------------------- aiohttp
async def test_aiohttp_client_on_the_chat_route_plain_and_streamed():
    async with FakeOpenAIServer(SCRIPT) as srv:
        async with aiohttp.ClientSession() as s:
            body = {"model": "m", "messages": USER, "tools": TOOLS}
            async with s.post(srv.base_url + "/chat/completions", json=body) as resp:
                assert resp.status == 200 and resp.content_type == "application/json"
                first = await resp.json()
            msg = first["choices"][0]["message"]
            assert msg["tool_calls"][0]["function"]["name"] == "terminal" and msg["content"] is None
            history = [
                *USER,
                msg,
                {"role": "tool", "tool_call_id": msg["tool_calls"][0]["id"], "content": "42"},
            ]
            async with s.post(srv.base_url + "/chat/completions", json={**body, "messages": history}) as resp:
                assert (await resp.json())["choices"][0]["message"]["content"] == "The answer is 42."
            async with s.post(srv.base_url + "/chat/completions", json={**body, "stream": True}) as resp:
                assert resp.status == 200 and resp.content_type == "text/event-stream"
                _assert_streamed_tool_call(_sse_events(await resp.text()))
        assert srv.turns() == [1, 2, 1]
        srv.assert_no_failures()


async def test_aiohttp_client_sees_chat_faults():
    script = [{**CALL, "fault": {"kind": 429, "retry_after": 1}}, {**CALL, "fault": "drop"}]
    async with FakeOpenAIServer(script) as srv:
        async with aiohttp.ClientSession() as s:
            body = {"model": "m", "messages": USER, "tools": TOOLS}
            async with s.post(srv.base_url + "/chat/completions", json=body) as resp:
                assert resp.status == 429 and resp.headers["Retry-After"] == "1"
                assert (await resp.json())["error"]["type"] == "requests"
            second = [*USER, {"role": "assistant", "content": "x"}]
            with pytest.raises(aiohttp.ClientConnectionError):
                async with s.post(
                    srv.base_url + "/chat/completions", json={**body, "messages": second}
                ) as resp:
                    await resp.read()
        assert [c.fault for c in srv.chat_calls] == ["429", "drop"]


# --------------------------------------------------------------------------- httpx (openai 2.x) in process
def test_sync_httpx_client_through_the_in_process_transport():
    srv = FakeOpenAIServer(SCRIPT)
    with httpx.Client(transport=srv.transport(httpx), base_url="http://fake/v1") as c:
        r = c.post("/chat/completions", json={"model": "m", "messages": USER, "tools": TOOLS})
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert r.json()["choices"][0]["finish_reason"] == "tool_calls"
        with c.stream(
            "POST", "/chat/completions", json={"model": "m", "messages": USER, "tools": TOOLS, "stream": True}
        ) as resp:
            assert resp.headers["content-type"] == "text/event-stream"
            _assert_streamed_tool_call(_sse_events("\n".join(resp.iter_lines())))
        assert c.get("/models").json()["data"][0]["id"] == "fake"
    assert srv.call_count == 3 and not srv.running
    srv.assert_no_failures()


async def test_async_httpx_client_through_the_in_process_transport_with_faults():
    srv = FakeOpenAIServer([CALL], faults=["drop:times=1", "latency:seconds=0.05,times=1"])
    async with httpx.AsyncClient(transport=srv.transport(httpx), base_url="http://fake/v1") as c:
        body = {"model": "m", "messages": USER, "tools": TOOLS}
        with pytest.raises(httpx.RemoteProtocolError):
            await c.post("/chat/completions", json=body)
        t0 = time.monotonic()
        r = await c.post("/chat/completions", json=body)
        assert r.status_code == 200 and time.monotonic() - t0 >= 0.045
        assert r.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "terminal"
        results = await asyncio.gather(*(c.post("/chat/completions", json=body) for _ in range(8)))
        assert {x.status_code for x in results} == {200}
    assert [c.fault for c in srv.chat_calls] == ["drop", "latency"] + [None] * 8


# --------------------------------------------------------------------------------------------- processes
CHILD = """
import json, sys
import openai
client = openai.OpenAI(base_url=sys.argv[1], api_key="x", max_retries=0)
tools = json.loads(sys.argv[2])
messages = [{"role": "user", "content": "q"}]
r = client.chat.completions.create(model="fake", messages=messages, tools=tools)
call = r.choices[0].message.tool_calls[0]
messages += [r.choices[0].message.model_dump(exclude_none=True),
             {"role": "tool", "tool_call_id": call.id, "content": "42"}]
r = client.chat.completions.create(model="fake", messages=messages, tools=tools)
print(r.choices[0].message.content)
"""


def test_a_client_in_another_process_against_a_server_started_here():
    with FakeOpenAIServer(SCRIPT) as srv:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, srv.base_url, json.dumps(TOOLS)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "The answer is 42."
        assert srv.turns() == [1, 2]
        srv.assert_no_failures()


def test_async_clients_on_their_own_loops_in_threads():
    import threading

    srv = FakeOpenAIServer(SCRIPT).start()
    errors: list[BaseException] = []

    def run() -> None:
        async def go() -> None:
            client = srv.async_client()
            r = await client.chat.completions.create(model="f", messages=USER, tools=TOOLS)
            assert r.choices[0].message.tool_calls
            await client.close()

        try:
            asyncio.run(go())
        except BaseException as e:  # surfaced below
            errors.append(e)

    try:
        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errors, errors
        assert srv.turns() == [1, 1, 1, 1]
        srv.assert_no_failures()
    finally:
        srv.stop()
