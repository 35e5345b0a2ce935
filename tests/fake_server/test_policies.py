"""Policies: callables and the built-in probes used by the conformance kit."""

from __future__ import annotations

import json

import openai
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer, Turn, args_from_schema, get_policy

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout": {"type": "integer", "minimum": 5}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": {
                    "mode": {"enum": ["fast", "deep"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "limit": {"type": ["integer", "null"], "maximum": 3},
                },
            },
        },
    },
]
USER = {"role": "user", "content": "echo me"}


def _ask(srv, messages, **kw):
    return srv.client().chat.completions.create(model="f", messages=messages, **kw).choices[0]


@pytest.mark.parametrize(
    ("name", "kw", "expected"),
    [
        ("do_nothing", {}, ""),
        ("refuse", {}, "I can't help with that."),
        ("echo", {}, "echo me"),
        ("answer", {"text": "Paris"}, "Paris"),
    ],
)
def test_simple_probes(name, kw, expected):
    with FakeOpenAIServer(policy=get_policy(name, **kw)) as srv:
        assert _ask(srv, [USER]).message.content == expected
        assert srv.chat_calls[0].responder == "policy"


def test_policy_by_spec_string_and_unknown_name():
    with FakeOpenAIServer(policy="answer:text=7") as srv:
        assert _ask(srv, [USER]).message.content == "7"
    with pytest.raises(ValueError, match="policy 'nope' should be one of the registered names") as e:
        get_policy("nope")
    assert isinstance(e.value, KeyError) and "echo" in str(e.value) and "Fix:" in str(e.value)


def test_register_policy_uses_the_shared_registry_rule():
    from hermes_envs.errors import RegistryError
    from hermes_envs.testing.fake_server import POLICIES, register_policy

    def mine():
        return lambda body: "mine"

    def other():
        return lambda body: "other"

    with POLICIES.isolated():
        register_policy("mine")(mine)
        register_policy("mine")(mine)  # the same definition again (an env module imported twice): replaced
        with pytest.raises(RegistryError, match="policy name 'mine' should be unique"):
            register_policy("mine")(other)
        assert get_policy("mine")({}) == "mine"
    assert "mine" not in POLICIES


def test_call_each_tool_calls_every_offered_tool_once_then_answers():
    with FakeOpenAIServer(policy="call_each_tool") as srv:
        messages = [USER]
        names = []
        for _ in range(5):
            choice = _ask(srv, messages, tools=TOOLS)
            msg = choice.message
            messages.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                break
            for tc in msg.tool_calls:
                names.append(tc.function.name)
                json.loads(tc.function.arguments)
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": "ok"})
        assert names == ["terminal", "search"] and msg.content == "Done."
        srv.assert_no_failures()


def test_args_from_schema_respects_types_enums_bounds():
    assert args_from_schema(TOOLS[0]["function"]["parameters"]) == {"command": "test", "timeout": 5}
    assert args_from_schema(TOOLS[1]["function"]["parameters"]) == {
        "mode": "fast",
        "tags": ["test"],
        "limit": 1,
    }
    assert args_from_schema(None) == {}
    assert args_from_schema(
        {
            "type": "object",
            "properties": {"o": {"properties": {"b": {"type": "boolean"}}}, "n": {"type": "number"}},
        }
    ) == {"o": {"b": True}, "n": 1.0}


def test_parallel_call_each_tool_and_spam_tools():
    with FakeOpenAIServer(policy=get_policy("call_each_tool", parallel=True)) as srv:
        assert [t.function.name for t in _ask(srv, [USER], tools=TOOLS).message.tool_calls] == [
            "terminal",
            "search",
        ]
    with FakeOpenAIServer(policy=get_policy("spam_tools", times=2)) as srv:
        assert _ask(srv, [USER], tools=TOOLS).message.tool_calls[0].function.name == "terminal"


def test_callable_policy_returning_dict_turn_or_str_and_as_script_fallback():
    seen = []

    def policy(body):
        seen.append(body["messages"][-1]["content"])
        return {"content": f"policy:{len(body['messages'])}"}

    with FakeOpenAIServer([{"content": "scripted"}], policy=policy) as srv:
        assert _ask(srv, [USER]).message.content == "scripted"
        later = [USER, {"role": "assistant", "content": "x"}, {"role": "user", "content": "more"}]
        assert _ask(srv, later).message.content == "policy:3"
        assert seen == ["more"] and srv.turns() == [1, None]
        srv.assert_no_failures()
    with FakeOpenAIServer(policy=lambda b: Turn(content="t")) as srv:
        assert _ask(srv, [USER]).message.content == "t"
    with FakeOpenAIServer(policy=lambda b: "s") as srv:
        assert _ask(srv, [USER]).message.content == "s"


def test_raising_policy_is_a_recorded_500():
    def bad(body):
        raise KeyError("oops")

    with FakeOpenAIServer(policy=bad) as srv:
        with pytest.raises(openai.InternalServerError, match="KeyError"):
            srv.client().chat.completions.create(model="f", messages=[USER])
        assert "KeyError" in srv.failures[0]
