"""SSE recorded one event per entry and replayed chunk by chunk; a cassette as a fake-server policy."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
import yaml

from hermes_envs.testing.cassettes import CassetteMissError, cassette_responder, use_cassette
from hermes_envs.testing.fake_server import FakeOpenAIServer

SCRIPT = {
    "turns": [
        {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}]},
        {"content": "The answer is forty-two, spelled out at some length."},
    ]
}
TOOLS = [{"type": "function", "function": {"name": "terminal", "parameters": {"type": "object"}}}]


def _stream(client: openai.OpenAI, messages: list[dict]) -> list[dict]:
    chunks = client.chat.completions.create(
        model="fake", messages=messages, tools=TOOLS, stream=True, stream_options={"include_usage": True}
    )
    return [c.model_dump(exclude={"created"}) for c in chunks]


def _conversation(client: openai.OpenAI) -> list[list[dict]]:
    first = [{"role": "user", "content": "6*7?"}]
    a = _stream(client, first)
    call = next(
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in a
        if c["choices"] and c["choices"][0]["delta"]["tool_calls"]
    )
    second = first + [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call["id"], "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": call["id"], "content": "42"},
    ]
    return [a, _stream(client, second)]


@pytest.fixture
def streamed(tmp_path: Path) -> tuple[Path, list[list[dict]]]:
    cassette = tmp_path / "stream.yaml"
    with FakeOpenAIServer(SCRIPT, stream_chunk_chars=8) as srv, use_cassette(cassette, "rewrite"):
        live = _conversation(
            openai.OpenAI(base_url=srv.base_url, api_key="sk-test-key-not-real", max_retries=0)
        )
    return cassette, live


def test_sse_is_stored_one_event_per_entry(streamed: tuple[Path, list[list[dict]]]) -> None:
    cassette, live = streamed
    data = yaml.safe_load(cassette.read_text())
    events = data["interactions"][1]["response"]["body"]["string"]["sse"]
    assert events[-1] == "data: [DONE]"
    assert len(events) - 1 == len(live[1]) > 3  # one entry per streamed chunk
    assert events[2]["choices"][0]["delta"]["content"] == live[1][2]["choices"][0]["delta"]["content"]


def test_sse_replays_chunk_by_chunk_without_the_server(streamed: tuple[Path, list[list[dict]]]) -> None:
    cassette, live = streamed
    with use_cassette(cassette) as session:  # the server is stopped: replay only
        replayed = _conversation(openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0))
    assert replayed == live and session.misses == [] and session.played == 2


def test_cassette_responder_answers_as_the_recorded_model(streamed: tuple[Path, list[list[dict]]]) -> None:
    cassette, _ = streamed
    responder = cassette_responder(cassette)
    with FakeOpenAIServer(policy=responder) as srv:
        out = srv.client().chat.completions.create(
            model="fake",
            messages=[{"role": "user", "content": "6*7?"}],
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
        names = [
            tc.function.name
            for c in out
            for ch in c.choices
            for tc in ch.delta.tool_calls or []
            if tc.function.name
        ]
    assert names == ["terminal"]
    with pytest.raises(CassetteMissError, match=r"messages\[0\]\.content"):
        responder(
            {
                "model": "fake",
                "messages": [{"role": "user", "content": "other"}],
                "tools": TOOLS,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
        )
    lenient = cassette_responder(cassette, strict=False)
    turn = lenient({"model": "fake", "messages": [{"role": "user", "content": "other"}]})
    assert turn["tool_calls"][0]["name"] == "terminal"  # the nearest recorded reply
