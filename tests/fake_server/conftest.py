from __future__ import annotations

import pytest

from hermes_envs.testing._fixtures import fake_http, fake_openai, fake_openai_session  # noqa: F401

TERMINAL = {
    "type": "function",
    "function": {
        "name": "terminal",
        "description": "Run a shell command.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fake_openai(script=None, policy=None, **kw): configure the fake_openai fixture"
    )


@pytest.fixture
def tools() -> list[dict]:
    return [TERMINAL]


class CharTokenizer:
    """A tiny tokenizer (one id per character) standing in for the offline tokenizer."""

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: list[int], **kw) -> str:
        return "".join(chr(i) for i in ids)


@pytest.fixture
def char_tokenizer() -> CharTokenizer:
    return CharTokenizer()
