"""Tool-call markers inside a closed <think>...</think> block are reasoning, not calls (Phase 2 raw text of
reasoning models keeps the block)."""

from __future__ import annotations

import json

import pytest

from hermes_envs.parsers import get_parser

CALL = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}


@pytest.mark.parametrize("name", ["hermes", "qwen3_coder", "mistral", "deepseek_v3_1", "kimi_k2", "glm45"])
def test_marker_mentioned_while_thinking_is_not_a_call(name: str) -> None:
    parser = get_parser(name)
    example = parser.render(None, [{**CALL, "function": {"name": "rm", "arguments": '{"path": "/"}'}}])
    real = parser.render(None, [CALL])
    thinking = f"<think>I must not run {example} here; listing is safer.</think>\n"
    content, calls = parser.parse(thinking + real)
    assert [c.function.name for c in calls] == ["terminal"]
    assert json.loads(calls[0].function.arguments) == {"command": "ls"}
    assert content is not None and content.startswith("<think>") and "rm" in content


def test_unclosed_think_block_hides_nothing() -> None:
    parser = get_parser("hermes")
    text = "<think>let me call it " + parser.render(None, [CALL])
    _content, calls = parser.parse(text)
    assert calls and calls[0].function.name == "terminal"


def test_several_think_blocks_and_calls_between_them() -> None:
    parser = get_parser("hermes")
    one = parser.render(None, [CALL])
    text = f"<think>{one}</think>\n{one}\n<think>again {one}</think>\n{one}"
    _content, calls = parser.parse(text)
    assert len(calls) == 2


@pytest.mark.parametrize(
    "name",
    ["hermes", "qwen", "qwen3_coder", "mistral", "deepseek_v3", "deepseek_v3_1", "kimi_k2", "glm45", "glm47"],
)
def test_a_call_drafted_before_a_lone_closing_think_tag_is_reasoning(name: str) -> None:
    # Qwen3-Thinking-2507, DeepSeek-R1-0528 and V3.1 templates put <think> in the prompt: the output has only </think>
    parser = get_parser(name)
    draft = parser.render(None, [{**CALL, "function": {"name": "draft", "arguments": "{}"}}])
    real = parser.render(None, [CALL])
    text = f"Maybe I should call {draft} first.\n</think>\n\n{real}"
    content, calls = parser.parse(text)
    assert [c.function.name for c in calls] == ["terminal"]
    assert content == f"Maybe I should call {draft} first.\n</think>"


def test_a_closing_think_tag_after_an_opening_one_is_an_ordinary_block() -> None:
    parser = get_parser("hermes")
    one = parser.render(None, [CALL])
    _content, calls = parser.parse(f"{one}\n<think>x</think>\n{one}")
    assert len(calls) == 2


def test_a_call_drafted_inside_magistrals_think_block_is_not_a_call() -> None:
    parser = get_parser("mistral")
    text = '[THINK]Maybe [TOOL_CALLS]draft{"a": 1} no.[/THINK]Okay.[TOOL_CALLS]real{"a": 2}'
    content, calls = parser.parse(text)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("real", {"a": 2})]
    assert content == '[THINK]Maybe [TOOL_CALLS]draft{"a": 1} no.[/THINK]Okay.'
    # an unclosed [THINK] hides nothing
    _content, calls = parser.parse('[THINK]hmm [TOOL_CALLS]f{"a": 1}')
    assert [c.function.name for c in calls] == ["f"]
