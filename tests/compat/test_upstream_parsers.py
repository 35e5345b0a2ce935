"""``environments.tool_call_parsers`` answers as upstream hermes-agent's parsers do where they differ from vLLM's
(which :mod:`hermes_envs.parsers` keeps): class names, untyped qwen3_coder values, mistral's unreadable payloads,
call ids, and the unknown-name message."""

from __future__ import annotations

import json

import pytest

from environments import tool_call_parsers as upstream
from environments.tool_call_parsers.common import make_uuid_id
from hermes_envs import parsers as ours
from hermes_envs.parsers.base import PARSERS

QWEN_CALL = "<tool_call>\n<function=set>\n{params}</function>\n</tool_call>"


def qwen(**raw: str) -> str:
    return QWEN_CALL.format(params="".join(f"<parameter={k}>{v}</parameter>\n" for k, v in raw.items()))


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("42", 42),
        ("null", None),
        ("NULL", None),
        ("true", True),
        ("True", True),  # a Python literal
        ('{"a": [1, 2]}', {"a": [1, 2]}),
        ("  spaced words  ", "spaced words"),
        ("{1, 2}", "{1, 2}"),  # a set has no JSON form: the text
    ],
)
def test_upstream_qwen3_coder_decodes_a_value_no_schema_types(raw: str, decoded: object) -> None:
    _, calls = upstream.get_parser("qwen3_coder").parse(qwen(v=raw))
    assert calls is not None and json.loads(calls[0].function.arguments) == {"v": decoded}


def test_ours_keeps_the_vllm_reading_and_a_schema_types_the_value_in_both() -> None:
    text = qwen(n="42", s="007")
    _, vllm = ours.get_parser("qwen3_coder").parse(text)
    assert vllm is not None and json.loads(vllm[0].function.arguments) == {"n": "42", "s": "007"}
    tools = [
        {
            "type": "function",
            "function": {
                "name": "set",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
                },
            },
        }
    ]
    for parser in (ours.get_parser("qwen3_coder"), upstream.get_parser("qwen3_coder")):
        _, calls = parser.parse(text, tools)
        assert calls is not None and json.loads(calls[0].function.arguments) == {"n": 42, "s": "007"}


def test_upstream_mistral_returns_an_unreadable_payload_unchanged() -> None:
    text = "x[TOOL_CALLS] [{bad]"
    assert upstream.get_parser("mistral").parse(text) == (text, None)
    content, calls = ours.get_parser("mistral").parse(text)
    assert calls is None and content is not None and "[TOOL_CALLS]" not in content  # vLLM's reading
    readable = 'hi[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}]'
    content, calls = upstream.get_parser("mistral").parse(readable)
    assert content == "hi" and calls is not None and len(calls[0].id) == 9 and calls[0].id.isalnum()


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("hermes", "HermesToolCallParser"),
        ("qwen", "QwenToolCallParser"),
        ("deepseek_v3_1", "DeepSeekV31ToolCallParser"),
        ("deepseek_v31", "DeepSeekV31ToolCallParser"),
        ("llama3_json", "LlamaToolCallParser"),
        ("qwen3_coder", "Qwen3CoderToolCallParser"),
    ],
)
def test_get_parser_returns_upstreams_class_for_a_builtin_name(name: str, cls: str) -> None:
    parser = upstream.get_parser(name)
    assert type(parser).__name__ == cls
    assert isinstance(parser, PARSERS.get(name)) and upstream.PARSER_REGISTRY[name] is type(parser)


def test_a_parser_registered_over_a_builtin_name_is_what_get_parser_returns() -> None:
    class Mine(upstream.ToolCallParser):
        def parse(self, text: str):  # type: ignore[override]
            return "mine", None

    with PARSERS.isolated():
        PARSERS.unregister("hermes")
        upstream.PARSER_REGISTRY["hermes"] = Mine
        assert type(upstream.get_parser("hermes")) is Mine and upstream.PARSER_REGISTRY["hermes"] is Mine
    assert type(upstream.get_parser("hermes")).__name__ == "HermesToolCallParser"


def test_an_unknown_name_raises_keyerror_in_upstreams_words() -> None:
    with pytest.raises(KeyError) as raised:
        upstream.get_parser("does_not_exist")
    message = str(raised.value)
    assert message.startswith("Tool call parser 'does_not_exist' not found. Available parsers: [")
    assert "'hermes'" in message


def test_make_uuid_id_is_prefix_and_eight_hex_digits() -> None:
    ids = {make_uuid_id() for _ in range(50)}
    assert len(ids) == 50
    for call_id in ids:
        assert call_id.startswith("call_") and len(call_id) == 13
        int(call_id[5:], 16)
    assert make_uuid_id("foo_").startswith("foo_")


def test_glm47_is_a_glm45_parser_as_upstreams_and_parses_as_ours() -> None:
    from environments.tool_call_parsers.glm45_parser import Glm45ToolCallParser

    parser = upstream.get_parser("glm47")
    assert isinstance(parser, Glm45ToolCallParser) and isinstance(parser, ours.Glm47Parser)
    text = "<tool_call>f\n<arg_key>n</arg_key><arg_value>3</arg_value>\n</tool_call>"
    assert parser.parse(text)[1] is not None and ours.get_parser("glm47").parse(text)[1] is not None
