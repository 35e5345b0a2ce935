"""The commonest chat completion (one choice, no fault, no stream, no logprobs) is written from fixed text around
the encoded message instead of encoding a whole response dict: its bytes must be exactly what the reply encoder
makes of the full response, whatever the texts hold."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_envs.testing.fake_server import Turn
from hermes_envs.testing.fake_server._model import FakeModel
from hermes_envs.testing.fake_server._replies import dumps

from .conftest import CharTokenizer

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def _answer(model: FakeModel, body: dict) -> bytes:
    reply = model.handle("POST", "/v1/chat/completions", json.dumps(body).encode())
    assert reply.status == 200, reply.body
    return reply.body


@settings(max_examples=60, deadline=None)
@given(
    content=st.none() | TEXT,
    reasoning=st.none() | TEXT,
    finish=st.none() | st.sampled_from(["stop", "length", "tool_calls", "content_filter"]),
    args=st.none() | TEXT,
    name=st.none() | TEXT.filter(bool),
    user=TEXT,
    tokenizer=st.booleans(),
)
def test_plain_completion_is_what_the_encoder_makes_of_the_full_response(
    content, reasoning, finish, args, name, user, tokenizer
):
    calls = [] if args is None else [{"name": "f", "arguments": args}, {"name": "f", "arguments": {}}]
    turn = Turn(content=content, reasoning_content=reasoning, finish_reason=finish, tool_calls=calls)
    model = FakeModel(policy=lambda body: turn, tokenizer=CharTokenizer() if tokenizer else None)
    body = {"messages": [{"role": "user", "content": user}], "tools": TOOLS}
    if name is not None:
        body["model"] = name
    sent = _answer(model, body)
    data = json.loads(sent)
    assert dumps(data) == sent  # byte for byte the encoder's output for the same data, members in order
    msg = {"role": "assistant", "content": content if (content is not None or not calls) else None}
    msg["refusal"] = None
    if msg["content"] is None and not calls:
        msg["content"] = ""
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = [
            {"id": f"call_fake1_0_{j}", "type": "function", "function": {"name": "f", "arguments": a}}
            for j, a in enumerate([args, "{}"])
        ]
    count = model.count
    completion = count(msg["content"] or "") + sum(
        count(tc["function"]["arguments"]) for tc in msg.get("tool_calls", [])
    )
    prompt = count(user)
    assert data == {
        "id": "chatcmpl-fake1",
        "object": "chat.completion",
        "created": model.created,
        "model": name or "fake",
        "choices": [
            {
                "index": 0,
                "message": msg,
                "logprobs": None,
                "finish_reason": finish or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "system_fingerprint": None,
    }
    assert model.calls[-1].response == data and model.calls[-1].response_json == sent


def test_a_created_time_that_is_not_an_int_is_written_as_the_encoder_writes_it():
    model = FakeModel(policy=lambda body: Turn(content="ok"))
    model.created = 1.5
    data = json.loads(_answer(model, {"messages": [{"role": "user", "content": "hi"}]}))
    assert data["created"] == 1.5 and data["choices"][0]["message"]["content"] == "ok"


def test_a_model_name_the_fast_encoder_refuses_goes_the_full_way():
    # a lone surrogate (the body parser falls back to the standard library): orjson refuses the name, and the full
    # response goes to the fallback encoder, which refuses it too: the same recorded 500 as before the fast path
    model = FakeModel(policy=lambda body: Turn(content="ok"))
    raw = b'{"model": "m\\ud800", "messages": [{"role": "user", "content": "hi"}]}'
    reply = model.handle("POST", "/v1/chat/completions", raw)
    assert reply.status == 500 and b"PydanticSerializationError" in reply.body
    assert model.calls[-1].responder == "miss"
