"""LLM-aware matching: what counts as the same request, and how a miss names the differing field."""

from __future__ import annotations

import json

import pytest

from hermes_envs.testing._cassette_matching import body_key, diff_bodies, endpoint, nearest, normalize_body

BASE = {
    "model": "m",
    "temperature": 0.7,
    "messages": [
        {"role": "user", "content": "What is 6*7?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_A1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": '{"command": "echo 42"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_A1",
            "content": "42 in /tmp/4f9c1b2e-1111-2222-3333-444455556666",
        },
    ],
    "tools": [{"type": "function", "function": {"name": "terminal", "parameters": {"type": "object"}}}],
}


def _with(**changes: object) -> dict:
    body = json.loads(json.dumps(BASE))
    body.update(changes)
    return body


def same(a: dict, b: dict) -> bool:
    return body_key(json.dumps(a)) == body_key(json.dumps(b))


@pytest.mark.parametrize("field", ["user", "seed", "stream_options", "metadata", "store"])
def test_volatile_fields_are_ignored(field: str) -> None:
    assert same(BASE, _with(**{field: {"x": 1} if field in ("stream_options", "metadata") else 123}))


def test_tool_call_ids_uuids_key_order_and_argument_spacing_are_ignored() -> None:
    other = json.loads(json.dumps(BASE))
    other["messages"][1]["tool_calls"][0]["id"] = "call_ZZ9"
    other["messages"][2]["tool_call_id"] = "call_ZZ9"
    other["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"command":"echo 42"}'
    other["messages"][2]["content"] = "42 in /tmp/0000aaaa-1111-2222-3333-444455556666"
    reordered = dict(reversed(list(other.items())))
    assert same(BASE, reordered)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"temperature": 1.0}, "temperature"),
        ({"model": "other"}, "model"),
        ({"top_p": 0.5}, "top_p"),
        ({"stream": True}, "stream"),
        ({"tools": []}, "tools"),
    ],
)
def test_answer_changing_fields_are_matched_and_named(changes: dict, field: str) -> None:
    assert not same(BASE, _with(**changes))
    assert any(d.startswith(field) for d in diff_bodies(json.dumps(_with(**changes)), json.dumps(BASE)))


def test_a_message_difference_is_named_down_to_the_field() -> None:
    other = json.loads(json.dumps(BASE))
    other["messages"][0]["content"] = "What is 6*8?"
    assert diff_bodies(json.dumps(other), json.dumps(BASE)) == [
        "messages[0].content: 'What is 6*8?' here, recorded 'What is 6*7?'"
    ]


def test_nearest_prefers_the_longest_shared_conversation() -> None:
    short = _with(messages=BASE["messages"][:1])
    recorded = [
        ("POST", "http://h/v1/chat/completions", json.dumps(short)),
        ("POST", "http://h/v1/chat/completions", json.dumps(BASE)),
    ]
    probe = json.loads(json.dumps(BASE))
    probe["messages"][2]["content"] = "41"
    index, diffs = nearest("POST", "http://x/v1/chat/completions", json.dumps(probe), recorded)
    assert index == 1 and diffs[0].startswith("messages[2].content: '41' here")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://openrouter.ai/api/v1/chat/completions", "chat/completions"),
        ("http://127.0.0.1:8000/v1/chat/completions", "chat/completions"),
        ("http://127.0.0.1:8000/generate", "generate"),
        ("/v1/completions?x=1", "completions"),
    ],
)
def test_endpoint_ignores_host_and_provider_prefix(url: str, expected: str) -> None:
    assert endpoint(url) == expected


def test_non_json_bodies_compare_as_bytes() -> None:
    assert normalize_body(b"raw bytes") == b"raw bytes"
    assert body_key(b"a") != body_key(b"b")


def test_nearest_is_the_closest_prompt_not_the_first_recorded() -> None:
    """Three first turns share the system prompt; the miss is a one-word edit of the third one's question."""
    system = {"role": "system", "content": "You are a calculator. Use the terminal."}

    def first_turn(question: str) -> str:
        return json.dumps({"model": "m", "messages": [system, {"role": "user", "content": question}]})

    recorded = [
        (
            "POST",
            "http://h/v1/chat/completions",
            first_turn("What is 691 * 16 + 499? Reply on the last line."),
        ),
        (
            "POST",
            "http://h/v1/chat/completions",
            first_turn("Name the capital of France, in one word please."),
        ),
        (
            "POST",
            "http://h/v1/chat/completions",
            first_turn("What is 854 * 42 - 132? Reply on the last line."),
        ),
    ]
    miss = first_turn("What is 854 * 42 - 132? Reply at the end.")
    index, diffs = nearest("POST", "http://h/v1/chat/completions", miss, recorded)
    assert index == 2, diffs
    assert diffs and diffs[0].startswith("messages[1].content")
