"""Tokens and masks built from a transcript with the offline tokenizer's chat template."""

from __future__ import annotations

from hermes_envs.env import tokenize_transcript, transcript_spans
from hermes_envs.testing.offline import load_offline_tokenizer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "description": "Run a command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is 6*7?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "terminal", "arguments": '{"command": "echo 42"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"output": "42\\n", "exit_code": 0}'},
    {"role": "assistant", "content": "Answer: 42 ✓"},
]


def test_tokens_decode_to_the_rendered_transcript_and_masks_cover_only_the_model() -> None:
    tok = load_offline_tokenizer()
    tokens, masks = tokenize_transcript(tok, MESSAGES, TOOLS)
    assert len(tokens) == len(masks)
    rendered = tok.apply_chat_template(MESSAGES, tools=TOOLS, tokenize=False)
    assert tok.decode(tokens) == rendered
    trained = tok.decode([t for t in masks if t != -100])
    expected = "".join(text for text, is_model in transcript_spans(tok, MESSAGES, TOOLS) if is_model)
    assert trained == expected
    assert '"name": "terminal"' in trained and "Answer: 42 ✓" in trained
    assert "What is 6*7?" not in trained and '"exit_code"' not in trained  # prompt and tool output masked
    # masked positions are exactly -100, unmasked ones equal the token id
    assert all(m in (-100, t) for t, m in zip(tokens, masks))


def test_without_chat_template_a_plain_rendering_is_used() -> None:
    class Plain:
        chat_template = None

        def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
            return [ord(c) for c in text]

    tokens, masks = tokenize_transcript(Plain(), MESSAGES[1:2] + [{"role": "assistant", "content": "hi"}])
    assert "".join(chr(t) for t in tokens) == "user: What is 6*7?\nassistant: hi\n"
    assert "".join(chr(m) for m in masks if m != -100) == "hi\n"
