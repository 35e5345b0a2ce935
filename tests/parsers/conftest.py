from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_envs.parsers import ParseResult


def _calls_of(result: ParseResult | tuple) -> list[tuple[str, Any]]:
    """(name, decoded arguments) for each call of a parse result."""
    calls = result.tool_calls if isinstance(result, ParseResult) else result[1]
    return [(c.function.name, json.loads(c.function.arguments)) for c in calls or []]


@pytest.fixture(scope="session")
def calls_of():
    return _calls_of


@pytest.fixture
def weather_tools() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                },
            },
        }
    ]
