"""The shared registry: one duplicate-name rule, re-imports replace, isolated() undoes changes."""

from __future__ import annotations

import pytest

from hermes_envs._registry import Registry
from hermes_envs.errors import HermesEnvsError, RegistryError, UnknownNameError


def test_same_definition_replaces_and_other_owner_raises() -> None:
    reg: Registry[int] = Registry("widget")
    reg.register("a", 1, site=("/x/mod.py", "A"))
    reg.register("a", 2, site=("/x/mod.py", "A"))  # the module imported again
    assert reg.get("a") == 2
    with pytest.raises(RegistryError) as info:
        reg.register("a", 3, site=("/y/other.py", "B"))
    message = str(info.value)
    assert "widget name 'a' should be unique" in message
    assert "A in /x/mod.py" in message and "B in /y/other.py" in message
    assert "Fix: choose another name" in message
    with pytest.raises(RegistryError, match="only once in that file"):
        reg.register("a", 4, site=("/x/mod.py", "C"))
    assert reg.get("a") == 2


def test_unknown_name_lists_known_and_suggests() -> None:
    reg: Registry[str] = Registry("parser", unknown_fix="pass one of those.")
    reg.register("hermes", "h")
    reg.register("mistral", "m")
    with pytest.raises(UnknownNameError) as info:
        reg.get("hermse")
    text = str(info.value)
    assert text.startswith("parser 'hermse' should be one of the registered names")
    assert "Did you mean 'hermes'?" in text and "Available: hermes, mistral." in text
    assert text.endswith("Fix: pass one of those.")
    assert isinstance(info.value, KeyError) and isinstance(info.value, HermesEnvsError)


def test_isolated_restores_entries() -> None:
    reg: Registry[int] = Registry("thing")
    reg.register("keep", 1)
    with reg.isolated():
        reg.register("temp", 2)
        reg.unregister("keep")
        assert reg.names() == ["temp"]
    assert reg.names() == ["keep"]


def test_tool_registry_isolated_and_reimport_keeps_place() -> None:
    from hermes_envs.tools import ToolRegistry

    reg = ToolRegistry()

    def first(x: int) -> int:
        """First."""
        return x

    def second(x: int) -> int:
        """Second."""
        return x

    reg.tool(first, name="a")
    reg.tool(second, name="b")
    with reg.isolated():
        reg.unregister("a")
        assert reg.names() == ["b"]
    assert reg.names() == ["a", "b"]
    reg.tool(first, name="a")  # the same definition again: replaces in place, no error
    assert reg.names() == ["a", "b"]
