"""Faults on a turn or as a seeded rate, seen through the real clients."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer, Fault, parse_fault

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


def _turn(fault, **extra):
    return [{**CALL, "fault": fault, **extra}]


@pytest.mark.parametrize(
    ("code", "exc"),
    [(429, openai.RateLimitError), (500, openai.InternalServerError), (503, openai.InternalServerError)],
)
def test_status_faults_then_retry_succeeds(code, exc):
    with FakeOpenAIServer(_turn({"kind": code, "retry_after": 0})) as srv:
        with pytest.raises(exc):
            srv.client(max_retries=0).chat.completions.create(model="f", messages=USER, tools=TOOLS)
        # times=1 by default: the next attempt of the same request is answered
        r = srv.client(max_retries=0).chat.completions.create(model="f", messages=USER, tools=TOOLS)
        assert r.choices[0].message.tool_calls
        assert [c.status for c in srv.chat_calls] == [code, 200] and srv.chat_calls[0].fault == str(code)
        srv.assert_no_failures()


def test_429_retry_after_headers_and_client_retry():
    with FakeOpenAIServer(_turn({"kind": 429, "retry_after": 0.05, "times": 2})) as srv:
        r = httpx.post(
            srv.base_url + "/chat/completions", json={"model": "f", "messages": USER, "tools": TOOLS}
        )
        assert (
            r.status_code == 429
            and r.headers["retry-after"] == "0.05"
            and r.headers["retry-after-ms"] == "50"
        )
        assert r.json()["error"]["code"] == "rate_limit_exceeded"
        t0 = time.monotonic()
        out = srv.client(max_retries=2).chat.completions.create(model="f", messages=USER, tools=TOOLS)
        assert out.choices[0].message.tool_calls and time.monotonic() - t0 >= 0.05
        assert [c.status for c in srv.chat_calls] == [429, 429, 200]


def test_latency_and_jitter():
    with FakeOpenAIServer(_turn({"kind": "latency", "seconds": 0.1, "jitter": 0.02})) as srv:
        for _ in range(2):  # latency applies every time by default
            t0 = time.monotonic()
            srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)
            assert time.monotonic() - t0 >= 0.075


def test_dropped_connection_over_http_and_in_process():
    with FakeOpenAIServer(_turn("drop")) as srv:
        with pytest.raises(openai.APIConnectionError):
            srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)
        assert srv.chat_calls[0].fault == "drop"
    srv = FakeOpenAIServer(_turn("drop"))
    with pytest.raises(openai.APIConnectionError):
        srv.client(in_process=True).chat.completions.create(model="f", messages=USER, tools=TOOLS)


def test_malformed_json_body():
    with FakeOpenAIServer(_turn({"kind": "malformed_json", "times": 2})) as srv:
        r = httpx.post(
            srv.base_url + "/chat/completions", json={"model": "f", "messages": USER, "tools": TOOLS}
        )
        assert r.status_code == 200
        with pytest.raises(ValueError):
            json.loads(r.content)
        with pytest.raises((openai.APIResponseValidationError, ValueError)):
            srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)


@pytest.mark.parametrize("in_process", [False, True])
def test_truncated_sse_stream(in_process):
    script = [{"content": "a long answer that is streamed in many small pieces", "fault": "truncated_sse"}]
    srv = FakeOpenAIServer(script, stream_chunk_chars=4)
    with srv:
        client = srv.client(in_process=in_process)
        got = []
        with pytest.raises((openai.APIConnectionError, httpx.RemoteProtocolError, Exception)) as ei:
            for chunk in client.chat.completions.create(model="f", messages=USER, stream=True):
                got.append(chunk)
        assert "DONE" not in str(ei.value)
        assert 0 < len(got) <= 2


def test_truncated_non_streamed_body():
    with FakeOpenAIServer(_turn("truncated_sse")) as srv:
        with pytest.raises(openai.APIConnectionError):
            srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)


def test_length_mid_tool_call_and_invalid_json_and_unknown_tool_and_empty_choices():
    with FakeOpenAIServer(_turn("length")) as srv:
        r = srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)
        args = r.choices[0].message.tool_calls[0].function.arguments
        assert r.choices[0].finish_reason == "length"
        with pytest.raises(ValueError):
            json.loads(args)
        assert '{"command": "echo 42"}'.startswith(args)
    with FakeOpenAIServer([{"content": "abcdefgh", "fault": "length"}]) as srv:
        r = srv.client().chat.completions.create(model="f", messages=USER)
        assert r.choices[0].message.content == "abcd" and r.choices[0].finish_reason == "length"
    with FakeOpenAIServer(_turn("invalid_tool_json")) as srv:
        r = srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)
        with pytest.raises(ValueError):
            json.loads(r.choices[0].message.tool_calls[0].function.arguments)
    with FakeOpenAIServer(_turn({"kind": "unknown_tool", "tool_name": "rm_rf"})) as srv:
        r = srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)
        assert r.choices[0].message.tool_calls[0].function.name == "rm_rf"
        srv.assert_no_failures()
    with FakeOpenAIServer(_turn({"kind": "empty_choices", "times": 2})) as srv:
        r = srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS)
        assert r.choices == []
        stream = srv.client().chat.completions.create(model="f", messages=USER, tools=TOOLS, stream=True)
        assert all(c.choices == [] for c in stream)


def test_server_wide_rate_is_seeded_and_reproducible():
    def run():
        with FakeOpenAIServer(policy="answer", faults=["500:rate=0.5,seed=7"]) as srv:
            c = srv.client()
            out = []
            for _ in range(20):
                try:
                    c.chat.completions.create(model="f", messages=USER)
                    out.append(200)
                except openai.InternalServerError:
                    out.append(500)
            return out

    a, b = run(), run()
    assert a == b and 3 < a.count(500) < 17


def test_fault_spec_parsing():
    assert parse_fault("429:retry_after=2,rate=0.5,seed=3") == Fault(
        kind="429", retry_after=2, rate=0.5, seed=3
    )
    assert parse_fault("rate_limit").code == 429 and parse_fault("unavailable").code == 503
    assert parse_fault("latency:seconds=0.1,jitter=0.01").kind == "latency"
    for bad in ("boom", "429:retry_after", "600", "500:rate=2", "500:nope=1"):
        with pytest.raises(ValueError):
            parse_fault(bad)


def test_set_faults_on_a_running_server():
    with FakeOpenAIServer(policy="answer") as srv:
        srv.set_faults(["503:times=1"])
        with pytest.raises(openai.InternalServerError):
            srv.client().chat.completions.create(model="f", messages=USER)
        assert (
            srv.client().chat.completions.create(model="f", messages=USER).choices[0].message.content == "42"
        )
