"""Script loading and validation: YAML/JSON/Python, errors naming file, line and field."""

from __future__ import annotations

import json

import pytest

from hermes_envs.errors import ScriptError
from hermes_envs.testing.fake_server import FakeOpenAIServer, Fault, Script, ToolCall, Turn, load_script

GOOD = """\
turns:
  - tool_calls: [{name: terminal, arguments: {command: "echo 42"}}]
  - content: "The answer is 42."
"""


def _write(tmp_path, text, name="script.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_skeleton_yaml_loads(tmp_path):
    s = load_script(_write(tmp_path, GOOD))
    assert len(s) == 2
    assert s.turns[0].tool_calls == [ToolCall("terminal", '{"command": "echo 42"}')]
    assert s.turns[1].content == "The answer is 42." and s.turns[1].resolved_finish_reason == "stop"
    assert s.turns[0].resolved_finish_reason == "tool_calls"


def test_json_file_and_bare_list(tmp_path):
    data = [{"tool_calls": [{"name": "t", "arguments": '{"a": 1}'}]}, {"content": "done"}]
    s = load_script(_write(tmp_path, json.dumps(data, indent=2), "s.json"))
    assert s.turns[0].tool_calls[0].arguments == '{"a": 1}' and s.turns[1].content == "done"


def test_server_accepts_path_str_dict_list_and_script(tmp_path):
    p = _write(tmp_path, GOOD)
    expected = {str(p): load_script(p).turns[0], "x": Turn(content="x")}
    for script in (p, str(p), {"turns": [{"content": "x"}]}, [{"content": "x"}], Script([Turn(content="x")])):
        first = FakeOpenAIServer(script).script.turns[0]  # every form is read into the same first turn
        assert first == expected[str(p) if script in (p, str(p)) else "x"]


def test_round_trip_through_to_dict(tmp_path):
    s = Script.from_obj(
        {
            "turns": [
                {
                    "content": "a",
                    "match": {"user": "x", "temperature": {"min": 0}},
                    "fault": {"kind": 429, "retry_after": 1},
                },
                {
                    "tool_calls": [{"name": "t", "arguments": {"k": [1, 2]}, "id": "c1"}],
                    "reasoning_content": "r",
                },
                {"content": "c", "choices": [{"content": "c1"}, "c2"]},
            ]
        }
    )
    import yaml

    again = load_script(_write(tmp_path, yaml.safe_dump(s.to_dict())))
    assert again.to_dict() == s.to_dict()
    assert again.turns[0].fault == Fault(kind="429", retry_after=1)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (
            "turns:\n  - content: ok\n  - tool_calls: [{name: t, argumnets: {}}]\n",
            ["line 3", "turns[1].tool_calls[0]", "'argumnets'", "did you mean 'arguments'", "Fix:"],
        ),
        (
            "turns:\n  - content: ok\n    contnet: oops\n",
            ["line 3", "turns[0]", "'contnet'", "did you mean 'content'"],
        ),
        ("turns:\n  - {}\n", ["line 2", "turns[0]", "content and/or tool_calls"]),
        ("turns: []\n", ["line 1", "at least one turn"]),
        ("turns:\n  - tool_calls: [{arguments: {}}]\n", ["line 2", "turns[0].tool_calls[0].name"]),
        (
            "turns:\n  - tool_calls: [{name: t, arguments: 5}]\n",
            ["line 2", "arguments", "mapping or a JSON string"],
        ),
        ("turns:\n  - content: x\n    finish_reason: done\n", ["line 3", "finish_reason", "stop"]),
        ("turns:\n  - content: x\n    match: {user: '('}\n", ["line 3", "match.user", "valid regex"]),
        ("turns:\n  - content: x\n    match: {usr: a}\n", ["line 3", "'usr'", "did you mean 'user'"]),
        ("turns:\n  - content: x\n    fault: 999\n", ["line 3", "fault", "between 400 and 599"]),
        ("turns:\n  - content: x\n    fault: {kind: explode}\n", ["line 3", "fault kind should be one of"]),
        ("turn:\n  - content: x\n", ["line 1", "'turn'", "did you mean 'turns'"]),
        ("turns:\n  - content: [1]\n", ["line 2", "content", "string or null"]),
        ("turns:\n  - content: x\n   bad: indent\n", ["line 3", "valid YAML"]),
        ("scripts: {'(': {turns: [{content: x}]}}\n", ["line 1", "valid regex"]),
        ("", ["empty file"]),
        ("- 1\n", ["turns[0]", "mapping"]),
    ],
)
def test_malformed_scripts_name_file_line_and_field(tmp_path, text, needles):
    p = _write(tmp_path, text)
    with pytest.raises(ScriptError) as ei:
        load_script(p)
    msg = str(ei.value)
    assert str(p) in msg
    for n in needles:
        assert n in msg, (n, msg)


def test_script_error_is_a_value_error_and_json_syntax_errors_have_lines(tmp_path):
    p = _write(tmp_path, '{\n\t"turns": [\n\t\t{"content": "x",}\n\t]\n}', "bad.json")
    with pytest.raises(ValueError, match=r"bad.json, line 3"):
        load_script(p)
    with pytest.raises(ScriptError, match="should be readable"):
        load_script(tmp_path / "missing.yaml")


def test_python_objects_validate_too():
    with pytest.raises(ScriptError, match="unknown field 'tools'"):
        Turn.from_obj({"tools": []})
    with pytest.raises(ScriptError):
        Script.from_obj({"turns": [{"tool_calls": [{"name": ""}]}]})
    t = Turn(tool_calls=[{"name": "x", "arguments": {"a": 1}}], match={"user": "hi"}, fault="500")
    assert t.tool_calls[0].arguments == '{"a": 1}' and t.match.user == "hi" and t.fault.code == 500
