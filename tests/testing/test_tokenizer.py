"""The offline tokenizer shipped as package data: loading, exact round-trip, special tokens, chat template."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_envs.testing.offline import (
    block_network,
    load_offline_tokenizer,
    offline_environ,
    offline_mode,
    offline_tokenizer_path,
)

SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
MARKUP = [
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
    "<tools>",
    "</tools>",
]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
]


def _call(name: str, arguments, call_id: str = "call_0") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# A multi-turn tool transcript: parallel calls (dict and string arguments), consecutive tool results,
# content + tool call in one message, whitespace-leading contents, unicode, a final answer.
TRANSCRIPT = [
    {"role": "system", "content": "You are a careful agent."},
    {"role": "user", "content": "Weather in Paris and Zürich? Also show notes.txt."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            _call("get_weather", {"city": "Paris"}, "c1"),
            _call("get_weather", '{"city": "Zürich"}', "c2"),
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 24, "sky": "sunny"}'},
    {"role": "tool", "tool_call_id": "c2", "content": '{"temp": 18, "sky": "rain"}'},
    {
        "role": "assistant",
        "content": "<think>\nNow the file.\n</think>\nLet me read it.",
        "tool_calls": [_call("read_file", {"path": "notes.txt"}, "c3")],
    },
    {"role": "tool", "tool_call_id": "c3", "content": "\n\n  line one\n😀 line two\n"},
    {"role": "assistant", "content": "  Paris: 24°C, sunny. Zürich: 18°C, rain.\n\nnotes.txt has two lines."},
    {"role": "user", "content": "\nThanks!"},
    {"role": "assistant", "content": "\n\nYou're welcome."},
]

ROUND_TRIP_SAMPLES = [
    "",
    " ",
    "\n",
    "  \n\t \r\n",
    "Hello, world!",
    " leading and trailing spaces  ",
    "Café naïve Zürich São Paulo İstanbul ß",
    "你好，世界！こんにちは 안녕하세요 Привет مرحبا नमस्ते",
    "😀👍🏽👩‍💻🇫🇷 ∑∫√∞≈≠",
    "\x00\x01\x7f\u200b\ufeff\U0010ffff",
    'def f(x: int) -> dict:\n    return {"a": [1, 2.5, None, True]}  # comment\n',
    json.dumps({"name": "get_weather", "arguments": {"city": "Paris", "n": 3}}, indent=2),
    '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>',
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\nhmm\n</think>\nok<|im_end|>\n<|endoftext|>",
    "<|im_start<|im_end|>|>  <tool_call <tool_call>> </tools></tools>",
]


@pytest.fixture(scope="module")
def tok():
    return load_offline_tokenizer()


def _encode(tok, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False)


def _render(tok, messages, **kwargs) -> str:
    return tok.apply_chat_template(messages, tokenize=False, **kwargs)


# -- loading --------------------------------------------------------------------------------------------------


def test_asset_files_are_small_and_complete():
    folder = Path(offline_tokenizer_path())
    assert folder.is_absolute()
    names = {p.name for p in folder.iterdir()}
    assert {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"} <= names
    assert sum(p.stat().st_size for p in folder.iterdir()) < 1_000_000
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert "<|im_start|>" in config["chat_template"]


def test_autotokenizer_loads_offline_with_network_blocked(monkeypatch):
    from transformers import AutoTokenizer

    with offline_mode(), block_network() as guard:
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        tok = AutoTokenizer.from_pretrained(offline_tokenizer_path())
    assert guard.blocked == []
    assert 2000 <= len(tok) <= 4096
    assert tok.eos_token == "<|im_end|>"
    assert tok.pad_token == "<|endoftext|>"
    assert tok.chat_template


def test_autotokenizer_loads_in_fresh_process_like_atroposlib():
    # atroposlib's BaseEnv does exactly `AutoTokenizer.from_pretrained(config.tokenizer_name)`.
    code = textwrap.dedent(
        """
        import sys
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(sys.argv[1])
        ids = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
        print(repr(ids))
        print(tok.convert_tokens_to_ids("<|im_end|>") == tok.eos_token_id)
        """
    )
    env = {**os.environ, **offline_environ()}
    proc = subprocess.run(
        [sys.executable, "-c", code, offline_tokenizer_path()],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-2] == repr("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    assert lines[-1] == "True"


def test_load_offline_tokenizer_is_cached(tok):
    assert load_offline_tokenizer() is tok


# -- round trip -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ROUND_TRIP_SAMPLES)
def test_round_trip_exact(tok, text):
    assert tok.decode(_encode(tok, text)) == text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text())
def test_round_trip_any_text(tok, text):
    assert tok.decode(_encode(tok, text)) == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.lists(st.sampled_from(["a", " ", "\n", "é", "😀", "{", '"', "<", *SPECIAL, *MARKUP])).map("".join)
)
def test_round_trip_with_markup(tok, text):
    assert tok.decode(_encode(tok, text)) == text


def test_compresses_ordinary_text(tok):
    text = "The model calls the get_weather function and returns the result to the user."
    assert len(_encode(tok, text)) < len(text) / 2.5


# -- special and added tokens ---------------------------------------------------------------------------------


@pytest.mark.parametrize("token", SPECIAL + MARKUP)
def test_token_is_single_id_and_never_split(tok, token):
    token_id = tok.convert_tokens_to_ids(token)
    assert token_id is not None and token_id != tok.unk_token_id
    assert _encode(tok, token) == [token_id]
    ids = _encode(tok, f"x{token}y {token}\n{token}{token}")
    assert ids.count(token_id) == 4


def test_special_tokens_are_skipped_but_markup_survives(tok):
    text = "<|im_start|>assistant\n<think>\nplan\n</think>\n<tool_call>\n{}\n</tool_call><|im_end|>\n<|endoftext|>"
    out = tok.decode(_encode(tok, text), skip_special_tokens=True)
    assert out == "assistant\n<think>\nplan\n</think>\n<tool_call>\n{}\n</tool_call>\n"
    assert set(tok.all_special_tokens) >= set(SPECIAL)
    assert not set(MARKUP) & set(tok.all_special_tokens)


def test_eos_and_pad(tok):
    assert tok.eos_token_id == tok.convert_tokens_to_ids("<|im_end|>")
    assert tok.pad_token_id == tok.convert_tokens_to_ids("<|endoftext|>")
    assert _encode(tok, "hi") == tok("hi")["input_ids"]  # no BOS/EOS added by default


# -- chat template --------------------------------------------------------------------------------------------


def test_template_plain_chat(tok):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert _render(tok, messages, add_generation_prompt=True) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert _render(tok, messages[1:]) == "<|im_start|>user\nHi<|im_end|>\n"


def test_template_tools_block(tok):
    text = _render(tok, [{"role": "user", "content": "Hi"}], tools=TOOLS)
    head, _, rest = text.partition("<|im_end|>\n")
    assert head.startswith("<|im_start|>system\n# Tools\n")
    listed = head.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0].split("\n")
    assert [json.loads(line) for line in listed] == TOOLS
    assert '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>' in head
    assert rest == "<|im_start|>user\nHi<|im_end|>\n"
    with_system = _render(
        tok, [{"role": "system", "content": "Sys."}, {"role": "user", "content": "Hi"}], tools=TOOLS
    )
    assert with_system.startswith("<|im_start|>system\nSys.\n\n# Tools\n")
    assert with_system.count("<|im_start|>system") == 1


def test_template_tool_calls_dict_and_string_arguments(tok):
    text = _render(tok, TRANSCRIPT[:3])
    assistant = text.split("<|im_start|>assistant\n", 1)[1]
    assert assistant == (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call><|im_end|>\n'
    )
    # Content first, then the call on its own line; flat {"name", "arguments"} calls work too.
    flat = [
        {"role": "assistant", "content": "Sure.", "tool_calls": [{"name": "f", "arguments": {"x": [1, "é"]}}]}
    ]
    assert _render(tok, flat) == (
        '<|im_start|>assistant\nSure.\n<tool_call>\n{"name": "f", "arguments": {"x": [1, "é"]}}\n</tool_call><|im_end|>\n'
    )


def test_template_groups_consecutive_tool_results(tok):
    text = _render(tok, TRANSCRIPT[:6])
    assert text.count("<|im_start|>user") == 2
    assert (
        '<|im_start|>user\n<tool_response>\n{"temp": 24, "sky": "sunny"}\n</tool_response>\n'
        '<tool_response>\n{"temp": 18, "sky": "rain"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n'
    ) in text
    # Ending on a tool result: the generation prompt closes the user turn.
    assert _render(tok, TRANSCRIPT[:5], add_generation_prompt=True).endswith(
        "</tool_response><|im_end|>\n<|im_start|>assistant\n"
    )


def test_template_content_parts_and_none(tok):
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": None, "tool_calls": [_call("f", {})]},
    ]
    assert _render(tok, messages) == (
        '<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "f", "arguments": {}}\n'
        "</tool_call><|im_end|>\n"
    )


def _assert_prefix_consistent(tok, messages, tools=None) -> int:
    checked = 0
    for k in range(1, len(messages)):
        gen = messages[k]["role"] == "assistant"
        short = _render(tok, messages[:k], tools=tools, add_generation_prompt=gen)
        full = _render(tok, messages[: k + 1], tools=tools)
        assert full.startswith(short), f"render of messages[:{k}] is not a prefix of messages[:{k + 1}]"
        short_ids, full_ids = _encode(tok, short), _encode(tok, full)
        assert full_ids[: len(short_ids)] == short_ids, f"token prefix broken at k={k}"
        checked += 1
    return checked


@pytest.mark.parametrize("tools", [None, TOOLS], ids=["no-tools", "tools"])
@pytest.mark.parametrize("start", [0, 1], ids=["system", "no-system"])
def test_template_prefix_consistent_multi_turn(tok, tools, start):
    assert _assert_prefix_consistent(tok, TRANSCRIPT[start:], tools) == len(TRANSCRIPT) - start - 1
    # The whole transcript tokenized once equals the full render tokenized (nothing depends on where we cut).
    full = _render(tok, TRANSCRIPT[start:], tools=tools)
    assert tok.decode(_encode(tok, full)) == full


_contents = st.text(max_size=30)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(_contents, min_size=6, max_size=6), n_results=st.integers(1, 3))
def test_template_prefix_consistent_any_content(tok, contents, n_results):
    messages = [
        {"role": "user", "content": contents[0]},
        {"role": "assistant", "content": contents[1], "tool_calls": [_call("f", {"q": contents[2]})]},
        *({"role": "tool", "content": contents[3]} for _ in range(n_results)),
        {"role": "assistant", "content": contents[4]},
        {"role": "user", "content": contents[5]},
        {"role": "assistant", "content": contents[0]},
    ]
    _assert_prefix_consistent(tok, messages, TOOLS)


def test_committed_asset_matches_a_fresh_deterministic_build():
    script = Path(__file__).resolve().parents[2] / "scripts" / "build_tokenizer.py"
    if not script.is_file():
        pytest.skip("build script not available (installed package)")
    proc = subprocess.run(
        [sys.executable, str(script), "--check", "--out", offline_tokenizer_path()],
        capture_output=True,
        text=True,
        env={**os.environ, **offline_environ()},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
