"""Chat completions with ``logprobs: true`` answer in OpenAI's shape, parsed by the real client, streamed or not."""

from __future__ import annotations

import httpx
import openai
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer

USER = [{"role": "user", "content": "q"}]
TEXT = "Hello, world! It's 42."


def test_no_logprobs_unless_asked():
    srv = FakeOpenAIServer([{"content": TEXT}])
    r = srv.client(in_process=True).chat.completions.create(model="f", messages=USER)
    assert r.choices[0].logprobs is None
    srv.assert_no_failures()


@pytest.mark.parametrize("top", [None, 0, 3])
def test_logprobs_shape_through_the_openai_client(top):
    kw = {} if top is None else {"top_logprobs": top}
    with FakeOpenAIServer(policy=lambda request: TEXT) as srv:
        r = srv.client().chat.completions.create(model="f", messages=USER, logprobs=True, n=2, **kw)
    for choice in r.choices:
        lp = choice.logprobs
        assert isinstance(lp, openai.types.chat.chat_completion.ChoiceLogprobs) and lp.refusal is None
        assert "".join(t.token for t in lp.content) == TEXT and len(lp.content) > 3
        for t in lp.content:
            assert t.logprob < 0 and bytes(t.bytes).decode() == t.token
            assert len(t.top_logprobs) == (top or 0)
            if top:
                assert t.top_logprobs[0].token == t.token and t.top_logprobs[0].logprob == t.logprob
                assert [x.logprob for x in t.top_logprobs] == sorted(
                    (x.logprob for x in t.top_logprobs), reverse=True
                )
    assert r.choices[0].logprobs == r.choices[1].logprobs  # deterministic


def test_logprobs_follow_the_tokenizer(char_tokenizer):
    srv = FakeOpenAIServer(policy="answer:text=abc", tokenizer=char_tokenizer)
    r = srv.client(in_process=True).chat.completions.create(model="f", messages=USER, logprobs=True)
    assert [t.token for t in r.choices[0].logprobs.content] == ["a", "b", "c"]


def test_streamed_logprobs_one_token_per_chunk():
    srv = FakeOpenAIServer(policy=lambda request: TEXT)
    chunks = list(
        srv.client(in_process=True).chat.completions.create(
            model="f", messages=USER, logprobs=True, top_logprobs=1, stream=True
        )
    )
    with_lp = [c.choices[0] for c in chunks if c.choices and c.choices[0].logprobs]
    assert all(
        len(c.logprobs.content) == 1 and c.delta.content == c.logprobs.content[0].token for c in with_lp
    )
    assert "".join(c.delta.content for c in with_lp) == TEXT
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_tool_call_messages_have_empty_content_logprobs(tools):
    script = [{"tool_calls": [{"name": "terminal", "arguments": {"command": "ls"}}]}]
    srv = FakeOpenAIServer(script)
    r = srv.client(in_process=True).chat.completions.create(
        model="f", messages=USER, tools=tools, logprobs=True
    )
    assert r.choices[0].message.tool_calls and r.choices[0].logprobs.content == []
    srv.assert_no_failures()


@pytest.mark.parametrize(
    "extra",
    [{"top_logprobs": 2}, {"logprobs": True, "top_logprobs": 21}, {"logprobs": "yes"}],
)
def test_invalid_logprobs_requests_are_400(extra):
    srv = FakeOpenAIServer(policy="echo")
    with httpx.Client(transport=srv.transport(httpx), base_url="http://fake") as c:
        r = c.post("/v1/chat/completions", json={"model": "f", "messages": USER, **extra})
    assert r.status_code == 400 and "logprobs" in r.json()["error"]["message"]
    assert len(srv.failures) == 1
