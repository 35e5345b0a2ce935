"""Chat completions through the real openai 3.x clients (sync and async), turn selection and misses."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import openai
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer, Script, Turn

TERMINAL = {
    "type": "function",
    "function": {
        "name": "terminal",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}
TWO_TURNS = {
    "turns": [
        {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}]},
        {"content": "The answer is 42."},
    ]
}

USER = {"role": "user", "content": "What is 6*7?"}


def _follow(client, tools, first_user=USER, **kw):
    """Run one rollout through the two-turn script: tool call, tool result, answer."""
    r1 = client.chat.completions.create(model="fake", messages=[first_user], tools=tools, **kw)
    msg = r1.choices[0].message
    assert r1.choices[0].finish_reason == "tool_calls"
    call = msg.tool_calls[0]
    messages = [
        first_user,
        msg.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "42"},
    ]
    r2 = client.chat.completions.create(model="fake", messages=messages, tools=tools)
    return r1, r2


def test_sync_openai_client_follows_the_script(tools):
    with FakeOpenAIServer(TWO_TURNS) as srv:
        r1, r2 = _follow(srv.client(), tools)
        call = r1.choices[0].message.tool_calls[0]
        assert call.type == "function" and call.function.name == "terminal"
        assert json.loads(call.function.arguments) == {"command": "echo 42"}
        assert r1.choices[0].message.content is None  # what OpenAI sends with tool calls only
        assert r2.choices[0].message.content == "The answer is 42."
        assert r2.choices[0].finish_reason == "stop"
        assert r2.usage.total_tokens == r2.usage.prompt_tokens + r2.usage.completion_tokens
        assert srv.call_count == 2 and srv.turns() == [1, 2]
        assert [c.matched_turn.content for c in srv.chat_calls] == [None, "The answer is 42."]
        srv.assert_no_failures()


def test_raw_wire_shape_is_an_openai_chat_completion(tools):
    import httpx

    with FakeOpenAIServer(TWO_TURNS, model="fake-model") as srv:
        body = httpx.post(
            srv.base_url + "/chat/completions", json={"model": "m", "messages": [USER], "tools": tools}
        ).json()
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int) and body["model"] == "m"
    choice = body["choices"][0]
    assert choice["index"] == 0 and choice["finish_reason"] == "tool_calls" and choice["logprobs"] is None
    msg = choice["message"]
    assert msg["role"] == "assistant" and msg["content"] is None
    tc = msg["tool_calls"][0]
    assert tc["type"] == "function" and tc["id"] and isinstance(tc["function"]["arguments"], str)
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


async def test_async_openai_client_concurrent_rollouts_each_follow_the_script(tools):
    async with FakeOpenAIServer(TWO_TURNS) as srv:
        client = srv.async_client()

        async def rollout(i):
            first = {"role": "user", "content": f"item {i}"}
            r1 = await client.chat.completions.create(model="fake", messages=[first], tools=tools)
            m = r1.choices[0].message
            msgs = [
                first,
                m.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": "42"},
            ]
            r2 = await client.chat.completions.create(model="fake", messages=msgs, tools=tools)
            return r2.choices[0].message.content

        results = await asyncio.gather(*(rollout(i) for i in range(16)))
        assert results == ["The answer is 42."] * 16
        assert sorted(srv.turns()) == [1] * 16 + [2] * 16
        assert srv.conversations() == 16
        srv.assert_no_failures()


def test_works_from_threads(tools):
    with FakeOpenAIServer(TWO_TURNS) as srv:
        client = srv.client()
        out: list[str] = []

        def run():
            out.append(_follow(client, tools)[1].choices[0].message.content)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert out == ["The answer is 42."] * 4
        srv.assert_no_failures()


def test_request_past_the_last_turn_is_a_miss_with_a_readable_message(tools):
    with FakeOpenAIServer(TWO_TURNS) as srv:
        client = srv.client()
        _, r2 = _follow(client, tools)
        msgs = [
            USER,
            {"role": "assistant", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "and again?"},
        ]
        with pytest.raises(openai.ConflictError) as ei:
            client.chat.completions.create(model="fake", messages=msgs, tools=tools)
        assert "turn 3" in str(ei.value)
        assert len(srv.failures) == 1
        msg = srv.failures[0]
        assert "POST /v1/chat/completions" in msg and "script has 2 turns" in msg
        assert "nearest expected turn (turn 2)" in msg and "Fix:" in msg and "'and again?'" in msg
        with pytest.raises(AssertionError, match="1 unmatched request"):
            srv.assert_no_failures()
        assert srv.calls[-1].status == 409 and srv.calls[-1].responder == "miss"


def test_miss_is_never_a_default_reply_and_lenient_mode_does_not_fail():
    with FakeOpenAIServer([{"content": "only"}], strict=False) as srv:
        client = srv.client()
        client.chat.completions.create(model="fake", messages=[USER])
        with pytest.raises(openai.ConflictError):
            client.chat.completions.create(
                model="fake", messages=[USER, {"role": "assistant", "content": "x"}, USER]
            )
        assert srv.failures == [] and len(srv.misses) == 1


def test_no_script_and_no_policy_is_a_miss():
    with FakeOpenAIServer() as srv:
        with pytest.raises(openai.ConflictError, match="script or a policy"):
            srv.client().chat.completions.create(model="fake", messages=[USER])
        assert len(srv.failures) == 1


def test_tool_call_not_offered_is_a_miss_naming_the_tools():
    with FakeOpenAIServer(TWO_TURNS) as srv:
        with pytest.raises(openai.ConflictError, match="offered no tools"):
            srv.client().chat.completions.create(model="fake", messages=[USER])
        other = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
        with pytest.raises(openai.ConflictError, match="did not offer"):
            srv.client().chat.completions.create(model="fake", messages=[USER], tools=[other])
        with pytest.raises(openai.ConflictError, match=r"tool_choice=\\?'none"):  # openai 2.x escapes quotes
            srv.client().chat.completions.create(
                model="fake", messages=[USER], tools=[TERMINAL], tool_choice="none"
            )
        assert len(srv.failures) == 3


def test_invalid_requests_are_400_and_recorded():
    import httpx

    with FakeOpenAIServer(TWO_TURNS) as srv:
        r = httpx.post(srv.base_url + "/chat/completions", content=b"{not json")
        assert r.status_code == 400 and "should be JSON" in r.json()["error"]["message"]
        r = httpx.post(srv.base_url + "/chat/completions", json={"model": "fake", "messages": []})
        assert r.status_code == 400
        r = httpx.get(srv.url + "/v2/nothing")
        assert r.status_code == 404 and "unknown route" in r.json()["error"]["message"]
        assert len(srv.failures) == 3


def test_n_greater_than_one_and_distinct_choices():
    script = [{"content": "x", "choices": [{"content": "a"}, {"content": "b"}]}]
    with FakeOpenAIServer(script) as srv:
        r = srv.client().chat.completions.create(model="fake", messages=[USER], n=4)
        assert [c.message.content for c in r.choices] == ["a", "b", "a", "b"]
        assert [c.index for c in r.choices] == [0, 1, 2, 3]
    with FakeOpenAIServer([{"content": "same"}]) as srv:
        r = srv.client().chat.completions.create(model="fake", messages=[USER], n=3)
        assert [c.message.content for c in r.choices] == ["same"] * 3


def test_reasoning_content_and_explicit_ids_and_finish_reason(tools):
    script = [
        {
            "reasoning_content": "think",
            "content": "hmm",
            "tool_calls": [{"name": "terminal", "arguments": '{"command": "ls"}', "id": "call_x"}],
            "finish_reason": "stop",
        }
    ]
    with FakeOpenAIServer(script) as srv:
        r = srv.client().chat.completions.create(model="fake", messages=[USER], tools=tools)
        m = r.choices[0].message
        assert m.content == "hmm" and m.tool_calls[0].id == "call_x"
        assert m.model_extra["reasoning_content"] == "think"
        assert r.choices[0].finish_reason == "stop"


def test_match_conditions(tools):
    script = {
        "turns": [
            {
                "match": {
                    "user": r"6\*7",
                    "tools_offered": ["terminal"],
                    "temperature": {"max": 0.5},
                    "model": "fa.*",
                },
                "tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}],
            },
            {"match": {"tool_results": True, "tool_result": "^42$"}, "content": "42"},
        ]
    }
    with FakeOpenAIServer(script) as srv:
        client = srv.client()
        _, r2 = _follow(client, tools, temperature=0.0)
        assert r2.choices[0].message.content == "42"
        srv.assert_no_failures()
        with pytest.raises(openai.ConflictError):
            client.chat.completions.create(
                model="other", messages=[{"role": "user", "content": "hello"}], tools=tools, temperature=1.0
            )
        miss = srv.failures[0]
        assert "differs" in miss
        for needle in ("user: expected", "temperature: expected", "model: expected", "'hello'"):
            assert needle in miss


def test_match_tool_results_false_and_tools_offered_bool(tools):
    script = [{"match": {"tool_results": False, "tools_offered": False}, "content": "no tools"}]
    with FakeOpenAIServer(script) as srv:
        assert (
            srv.client().chat.completions.create(model="f", messages=[USER]).choices[0].message.content
            == "no tools"
        )
        with pytest.raises(openai.ConflictError, match="tools_offered"):
            srv.client().chat.completions.create(model="f", messages=[USER], tools=tools)


async def test_keyed_scripts_each_item_follows_its_own(tools):
    script = {
        "scripts": {
            "capital of France": {"turns": [{"content": "Paris"}]},
            r"6\*7": [
                {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}]},
                {"content": "42"},
            ],
        }
    }
    async with FakeOpenAIServer(script) as srv:
        client = srv.async_client()

        async def ask(q):
            r = await client.chat.completions.create(
                model="f", messages=[{"role": "user", "content": q}], tools=tools
            )
            return r.choices[0].message

        france, math = await asyncio.gather(ask("What is the capital of France?"), ask("What is 6*7?"))
        assert france.content == "Paris" and math.tool_calls[0].function.name == "terminal"
        with pytest.raises(openai.ConflictError, match="keyed scripts"):
            await ask("something else")
        assert "capital of France" in srv.failures[0]


def test_python_script_objects_and_script_swap():
    s = Script([Turn(content="one"), "two"])
    with FakeOpenAIServer(s) as srv:
        c = srv.client()
        assert c.chat.completions.create(model="f", messages=[USER]).choices[0].message.content == "one"
        srv.script = [{"content": "swapped"}]
        assert c.chat.completions.create(model="f", messages=[USER]).choices[0].message.content == "swapped"
        srv.reset()
        assert srv.call_count == 0


def test_assertion_helpers(tools):
    with FakeOpenAIServer(TWO_TURNS) as srv:
        c = srv.client()
        c.chat.completions.create(model="f", messages=[USER], tools=tools, temperature=0.7)
        c.models.list()
        assert srv.tools_offered() == [["terminal"]]
        assert srv.temperatures() == [0.7]
        assert srv.turns() == [1]
        assert len(srv.calls_to("/v1/models")) == 1 and len(srv.calls_to("/models")) == 1
        assert srv.chat_calls[0].body["temperature"] == 0.7 and srv.chat_calls[0].ok


def test_models_and_health():
    import httpx

    with FakeOpenAIServer(model="my-model") as srv:
        assert [m.id for m in srv.client().models.list()] == ["my-model"]
        assert httpx.get(srv.url + "/health").status_code == 200
        assert srv.failures == []
    assert "stopped" in repr(srv)
    with pytest.raises(RuntimeError, match="not running"):
        _ = srv.base_url


def test_recorded_calls_keep_few_objects_for_the_garbage_collector():
    """Records are kept for the server's life; parsed bodies and responses would make every collection slower."""
    import gc

    body = {"model": "m", "messages": [USER, {"role": "assistant", "content": "a"}, USER], "tools": []}
    with FakeOpenAIServer(policy="answer:text=ok") as srv:
        client = httpx.Client(transport=srv.transport(httpx), base_url="http://x")
        client.post("/v1/chat/completions", json=body)
        gc.collect()
        before = len(gc.get_objects())
        for _ in range(300):
            client.post("/v1/chat/completions", json=body)
        gc.collect()
        grown = len(gc.get_objects()) - before
        assert (
            srv.calls[-1].body == body and srv.calls[-1].response["choices"][0]["message"]["content"] == "ok"
        )
    assert grown / 300 < 3, grown
