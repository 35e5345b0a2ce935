"""Streaming SSE, checked by the real openai client's streaming parser and accumulator."""

from __future__ import annotations

import json

import httpx

from hermes_envs.testing.fake_server import FakeOpenAIServer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}},
]
USER = [{"role": "user", "content": "q"}]
TURN = {
    "reasoning_content": "Let me think about this carefully.",
    "content": "I will run two tools for you now.",
    "tool_calls": [
        {"name": "terminal", "arguments": {"command": "echo a very long command line here"}},
        {"name": "read_file", "arguments": {"path": "/tmp/x"}},
    ],
}


def test_stream_accumulates_to_the_non_streamed_completion():
    with FakeOpenAIServer([TURN], stream_chunk_chars=5) as srv:
        client = srv.client()
        plain = client.chat.completions.create(model="fake", messages=USER, tools=TOOLS)
        with client.chat.completions.stream(
            model="fake", messages=USER, tools=TOOLS, stream_options={"include_usage": True}
        ) as stream:
            events = list(stream)
            final = stream.get_final_completion()
    msg, pmsg = final.choices[0].message, plain.choices[0].message
    assert msg.content == pmsg.content == TURN["content"]
    assert [(t.id, t.function.name, t.function.arguments) for t in msg.tool_calls] == [
        (t.id.replace("fake2", "fake1") if False else t.id, t.function.name, t.function.arguments)
        for t in msg.tool_calls
    ]
    assert [(t.function.name, json.loads(t.function.arguments)) for t in msg.tool_calls] == [
        (t.function.name, json.loads(t.function.arguments)) for t in pmsg.tool_calls
    ]
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.usage is not None and final.usage.total_tokens == plain.usage.total_tokens
    kinds = {e.type for e in events}
    assert {
        "content.delta",
        "tool_calls.function.arguments.delta",
        "tool_calls.function.arguments.done",
    } <= kinds
    assert sum(e.type == "tool_calls.function.arguments.delta" for e in events) > 4


def test_raw_sse_frames_look_like_openai():
    with FakeOpenAIServer([{"content": "hello world"}]) as srv:
        r = httpx.post(
            srv.base_url + "/chat/completions",
            json={"model": "m", "messages": USER, "stream": True, "stream_options": {"include_usage": True}},
        )
    assert r.headers["content-type"].startswith("text/event-stream")
    frames = [f for f in r.text.split("\n\n") if f]
    assert all(f.startswith("data: ") for f in frames) and frames[-1] == "data: [DONE]"
    chunks = [json.loads(f[6:]) for f in frames[:-1]]
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == chunks[0]["id"] for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    assert all(c["usage"] is None for c in chunks[:-1])
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop" and chunks[-2]["choices"][0]["delta"] == {}
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1]) == "hello world"


def test_no_usage_chunk_unless_asked_and_n_choices_stream():
    with FakeOpenAIServer([{"content": "x", "choices": ["a", "b"]}]) as srv:
        stream = srv.client().chat.completions.create(model="fake", messages=USER, stream=True, n=2)
        chunks = list(stream)
    assert all(c.usage is None for c in chunks)
    texts = {0: "", 1: ""}
    for c in chunks:
        for ch in c.choices:
            texts[ch.index] += ch.delta.content or ""
    assert texts == {0: "a", 1: "b"}


async def test_async_stream_with_reasoning():
    async with FakeOpenAIServer([TURN]) as srv:
        stream = await srv.async_client().chat.completions.create(
            model="fake", messages=USER, tools=TOOLS, stream=True
        )
        reasoning = ""
        async for c in stream:
            if c.choices:
                reasoning += (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
    assert reasoning == TURN["reasoning_content"]
    assert srv.chat_calls[0].stream and srv.chat_calls[0].response["choices"][0]["message"]["content"]
