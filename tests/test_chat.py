"""hermes_envs._chat: one reading of "assistant turns so far" and "tools offered" for every layer."""

from __future__ import annotations

from hermes_envs._chat import assistant_turns, offered_functions, offered_tool_names, tool_names


def test_assistant_turns_counts_assistant_messages_only():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "content": "t"},
        "not a message",
        {"role": "assistant", "content": "done"},
    ]
    assert assistant_turns(messages) == 2
    assert assistant_turns(None) == 0


def test_offered_tools_reads_wrapped_and_flat_shapes():
    body = {
        "tools": [
            {"type": "function", "function": {"name": "terminal", "parameters": {}}},
            {"name": "flat_tool"},
            {"type": "function", "function": {"description": "no name"}},
            42,
        ]
    }
    assert [f.get("name") for f in offered_functions(body["tools"])] == ["terminal", "flat_tool", None]
    assert offered_tool_names(body) == ["terminal", "flat_tool"] == tool_names(body["tools"])
    assert offered_tool_names({"messages": []}) == [] and offered_tool_names(None) == []
