"""Script validation reports every problem at once, with lines, and guesses indentation mistakes (issue 13)."""

from __future__ import annotations

import pytest

from hermes_envs.errors import ScriptError
from hermes_envs.testing.fake_server import Script, load_script


def _problems(tmp_path, text: str) -> tuple[str, list[str]]:
    p = tmp_path / "script.yaml"
    p.write_text(text)
    with pytest.raises(ScriptError) as ei:
        load_script(p)
    return str(ei.value), getattr(ei.value, "problems", [str(ei.value)])


def test_every_problem_is_reported_at_once_with_its_line(tmp_path):
    text = (
        "turns:\n"
        "  - content: ok\n"
        "    finish_reason: done\n"  # line 3
        "  - tool_calls: [{name: t, argumnets: {}}]\n"  # line 4
        "  - content: [1]\n"  # line 5
        "    match: {usr: a}\n"  # line 6
        "    fault: 999\n"  # line 7
    )
    msg, problems = _problems(tmp_path, text)
    assert len(problems) == 5 and "5 problems" in msg
    for line, needle in [
        (3, "turns[0].finish_reason"),
        (4, "'argumnets'"),
        (5, "turns[2].content should be a string or null"),
        (6, "'usr'"),
        (7, "between 400 and 599"),
    ]:
        assert any(f"line {line}:" in p and needle in p for p in problems), (line, needle, problems)
    assert all("Fix:" in p for p in problems)


def test_a_key_dedented_out_of_its_turn_is_named_as_an_indentation_mistake(tmp_path):
    msg, _ = _problems(tmp_path, "turns:\n  - content: ok\nmatch: {user: hi}\n")
    assert "line 3" in msg and "'match' is a turn field" in msg and "indent it" in msg


def test_a_tool_call_field_at_the_turn_level_is_named_as_an_indentation_mistake(tmp_path):
    text = "turns:\n- content: a\n  tool_calls:\n  - name: t\n  arguments: {x: 1}\n"
    msg, _ = _problems(tmp_path, text)
    assert "line 5" in msg and "'arguments' is a tool-call field" in msg and "tool_calls" in msg


def test_a_match_condition_at_the_turn_level_and_a_turn_field_inside_match(tmp_path):
    text = (
        "turns:\n  - content: a\n    user: hi\n  - content: b\n    match:\n      user: x\n      fault: 429\n"
    )
    msg, problems = _problems(tmp_path, text)
    assert len(problems) == 2
    assert "line 3" in problems[0] and "put it under `match:`" in problems[0]
    assert "line 7" in problems[1] and "'fault' is a turn field" in problems[1] and "dedent" in problems[1]


def test_a_yaml_indentation_error_says_which_column_the_key_belongs_at(tmp_path):
    text = "turns:\n  - tool_calls:\n    - name: t\n      arguments: {}\n     id: c\n"
    msg, _ = _problems(tmp_path, text)
    assert "line 5" in msg and "`id:` starts at column 6" in msg and "column 7" in msg


def test_python_mappings_report_every_problem_too():
    with pytest.raises(ScriptError) as ei:
        Script.from_obj({"turns": [{"tool_calls": [{"name": ""}]}, {"content": 5}, {"contnet": "x"}]})
    assert len(ei.value.problems) == 3
    assert "turns[0].tool_calls[0].name" in str(ei.value) and "did you mean 'content'" in str(ei.value)
