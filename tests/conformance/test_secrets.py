"""Secret shapes for HC107/HC901: real keys are found whatever dashes they hold; placeholders are not."""

from __future__ import annotations

import pytest

from hermes_envs.conformance._secrets import find_secrets, looks_real

# Built at run time, so this file holds no key-shaped literal for our own secret lint to flag.
TAIL = "Xy7pQ2mN9vR4tL8kJ3hG6fD1sA5zC0bV"


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("sk-ant-api03-" + TAIL + "-wE2rT7yU9iO4pL6kJ8hG3fD5sA1zQ-AA", "Anthropic API key"),
        ("sk-proj-" + TAIL + "_iJ5kL-x7Tq", "OpenAI API key"),
        ("sk-" + TAIL, "OpenAI API key"),
        ("sk-or-v1-" + TAIL.lower() + "0123456789", "OpenRouter API key"),
    ],
)
def test_real_looking_keys_are_found_even_with_dashes_near_the_end(key: str, kind: str) -> None:
    found = find_secrets(f'API_KEY = "{key}"\n')
    assert [(m.kind, m.line) for m in found] == [(kind, 1)]
    assert key not in found[0].redacted


@pytest.mark.parametrize(
    "value",
    [
        "sk-xxxxxxxxxxxxxxxxxxxxxxxx",
        "sk-your-key-here-1234567890",
        "sk-proj-aaaaaaaaaaaaaaaaaaaaaaaa-bbbb",
        "sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaa-AA",
        "sk-placeholder-0123456789abcdef",
    ],
)
def test_placeholders_are_not_secrets(value: str) -> None:
    assert not looks_real(value) and find_secrets(f'key = "{value}"') == []
