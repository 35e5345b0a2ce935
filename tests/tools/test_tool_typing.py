"""``tool()`` returns the decorated function itself, typed as itself (the overloads; ``py.typed`` ships them).

``typing.assert_type`` is checked by a type checker reading this file and is a no-op at run time; the run-time
assertions pin the same promise: the object you decorated is the object you get back, still callable as before.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import hermes_envs
from hermes_envs.tools import registry as default_registry
from hermes_envs.tools import tool
from hermes_envs.tools.registry import ToolRegistry

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover
    from typing_extensions import assert_type


def _add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


def test_bare_and_configured_decorators_return_the_function_unchanged() -> None:
    reg = ToolRegistry()
    bare = reg.tool(_add)
    assert_type(bare(1), int)
    configured = reg.tool(name="plus", toolset="math")(_add)
    assert bare is _add and configured is _add
    assert bare(2, 3) == 5 and configured(2) == 3
    assert reg.get("plus").toolset == "math" and reg.dispatch("_add", {"a": 1, "b": 2}, "t") == "3"


def test_module_level_tool_keeps_the_function() -> None:
    with default_registry.isolated():

        @tool
        def shout(text: str) -> str:
            """Upper-case the text."""
            return text.upper()

        @tool(name="whisper")
        def quiet(text: str) -> str:
            """Lower-case the text."""
            return text.lower()

        assert_type(shout("a"), str)
        assert shout("hi") == "HI" and quiet("HI") == "hi"
        assert shout.__name__ == "shout" and default_registry.get("whisper").handler is quiet


def test_the_package_ships_its_types() -> None:
    assert (Path(hermes_envs.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("decorate", [ToolRegistry().tool, ToolRegistry().tool()])
def test_decorating_twice_styles_agree(decorate: Callable[..., object]) -> None:
    def echo(x: str) -> str:
        """Echo x."""
        return x

    assert decorate(echo) is echo
