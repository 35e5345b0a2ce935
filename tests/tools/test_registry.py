from __future__ import annotations

import enum
import json
from typing import Literal, Optional

import pytest

from hermes_envs.errors import ToolRegistryError
from hermes_envs.tools import Tool, ToolRegistry, registry, schema_from_function


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def typed(
    text: str,
    count: int,
    ratio: float,
    flag: bool,
    items: list[int],
    mapping: dict,
    maybe: Optional[str],  # noqa: UP045 - the Optional spelling is what users write
    union: int | None = None,
    mode: Literal["fast", "slow"] = "fast",
    color: Color = Color.RED,
    names: list[str] | None = None,
    scores: dict[str, float] | None = None,
    task_id: str = "",
) -> str:
    """Do typed things.

    A second paragraph that is not part of the description.

    Args:
        text: The text to use.
        count (int): How many times,
            continued on the next line.
        mode: Speed.

    Returns:
        Something.
    """
    return text


def test_schema_is_derived_from_hints_defaults_and_docstring():
    description, params = schema_from_function(typed)
    assert description == "Do typed things."
    props = params["properties"]
    assert params["type"] == "object"
    assert params["required"] == ["text", "count", "ratio", "flag", "items", "mapping", "maybe"]
    assert "task_id" not in props
    assert props["text"] == {"type": "string", "description": "The text to use."}
    assert props["count"] == {"type": "integer", "description": "How many times, continued on the next line."}
    assert props["ratio"] == {"type": "number"}
    assert props["flag"] == {"type": "boolean"}
    assert props["items"] == {"type": "array", "items": {"type": "integer"}}
    assert props["mapping"] == {"type": "object"}
    assert props["maybe"] == {"type": "string"}
    assert props["union"] == {"type": "integer"}
    assert props["mode"] == {
        "type": "string",
        "enum": ["fast", "slow"],
        "description": "Speed.",
        "default": "fast",
    }
    assert props["color"] == {"type": "string", "enum": ["red", "blue"], "default": "red"}
    assert props["names"] == {"type": "array", "items": {"type": "string"}}
    assert props["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    json.dumps(params)  # JSON-serialisable


def test_undocumented_untyped_function():
    def bare(x, y=3):
        return x

    description, params = schema_from_function(bare)
    assert description == "bare"
    assert params == {"type": "object", "properties": {"x": {}, "y": {"default": 3}}, "required": ["x"]}


def test_unsupported_hints_and_positional_only_are_refused():
    def bad(x: set[bytes]) -> None: ...

    def bad2(x: object) -> None: ...

    def posonly(x: int, /) -> None: ...

    with pytest.raises(ToolRegistryError, match="parameter 'x' should have a JSON-compatible type hint"):
        schema_from_function(bad2)
    with pytest.raises(ToolRegistryError, match="got <class 'bytes'>"):
        schema_from_function(bad)
    with pytest.raises(ToolRegistryError, match="positional-only"):
        schema_from_function(posonly)


def test_decorator_registers_and_returns_the_function():
    reg = ToolRegistry()

    @reg.tool
    def plain(a: int) -> int:
        """Plain."""
        return a

    @reg.tool(name="renamed", toolset="math", description="Custom text.")
    def add(a: int, b: int = 1) -> int:
        return a + b

    assert plain(2) == 2 and add(1) == 2
    assert reg.names() == ["plain", "renamed"]
    assert reg.toolsets() == {"custom": ["plain"], "math": ["renamed"]}
    assert reg.get("renamed").schema() == {
        "type": "function",
        "function": {
            "name": "renamed",
            "description": "Custom text.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
                "required": ["a"],
            },
        },
    }


def test_duplicate_names_are_refused_naming_both():
    reg = ToolRegistry()

    @reg.tool(toolset="one")
    def same() -> str:
        return "1"

    def other() -> str:
        return "2"

    with pytest.raises(ToolRegistryError) as info:
        reg.tool(other, name="same", toolset="two")
    msg = str(info.value)
    assert "'same'" in msg and "same" in msg and "other" in msg and "'one'" in msg and "'two'" in msg
    assert isinstance(info.value, ValueError)
    reg.unregister("same")
    reg.tool(other, name="same")
    assert reg.dispatch("same", {}, "t") == "2"


def test_invalid_tools_are_refused():
    with pytest.raises(ToolRegistryError, match="tool name"):
        Tool(name="has space", toolset="x", description="", parameters={"type": "object"}, handler=print)
    with pytest.raises(ToolRegistryError, match="callable"):
        Tool(name="x", toolset="x", description="", parameters={"type": "object"}, handler=3)
    with pytest.raises(ToolRegistryError, match="type 'object'"):
        Tool(name="x", toolset="x", description="", parameters={"type": "string"}, handler=print)
    with pytest.raises(ToolRegistryError, match="should get a Tool"):
        ToolRegistry().register({"name": "x"})


def _sample() -> ToolRegistry:
    reg = ToolRegistry()
    for name, ts in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c")]:
        reg.register(
            Tool(name=name, toolset=ts, description=name, parameters={"type": "object"}, handler=dict)
        )
    return reg


def test_resolve_toolsets():
    reg = _sample()
    schemas, names = reg.resolve()
    assert names == {"a1", "a2", "b1", "c1"} and [s["function"]["name"] for s in schemas] == [
        "a1",
        "a2",
        "b1",
        "c1",
    ]
    assert reg.resolve(["a"])[1] == {"a1", "a2"}
    assert reg.resolve(["a", "b"], ["b"])[1] == {"a1", "a2"}
    assert reg.resolve(None, ["a", "c"])[1] == {"b1"}
    assert reg.resolve([]) == ([], set())


def test_resolve_unknown_toolset_lists_the_available_ones():
    reg = _sample()
    with pytest.raises(
        ToolRegistryError, match=r"got unknown \['web'\]. Available toolsets: \['a', 'b', 'c'\]"
    ):
        reg.resolve(["a", "web"])
    with pytest.raises(ToolRegistryError, match="disabled_toolsets"):
        reg.resolve(None, ["nope"])
    with pytest.raises(ToolRegistryError, match=r"Fix: \['a'\]"):
        reg.resolve("a")


def test_dispatch():
    reg = ToolRegistry()
    seen = {}

    @reg.tool
    def text(value: str) -> str:
        return value

    @reg.tool
    def structured(n: int, task_id: str) -> dict:
        seen["task_id"] = task_id
        return {"n": n, "ü": [1, 2]}

    @reg.tool
    def boom() -> None:
        raise RuntimeError("broken")

    assert reg.dispatch("text", {"value": '{"raw": 1}'}, "t") == '{"raw": 1}'
    assert json.loads(reg.dispatch("structured", {"n": 3}, "task-9")) == {"n": 3, "ü": [1, 2]}
    assert seen["task_id"] == "task-9"
    assert reg.dispatch("boom" if False else "text", {"value": ""}, "t") == ""
    with pytest.raises(RuntimeError, match="broken"):
        reg.dispatch("boom", {}, "t")
    with pytest.raises(
        KeyError, match=r"unknown tool 'nope'; registered tools: \['boom', 'structured', 'text'\]"
    ):
        reg.dispatch("nope", {}, "t")
    with pytest.raises(TypeError, match=r"unexpected argument\(s\) \['extra'\]"):
        reg.dispatch("text", {"value": "x", "extra": 1}, "t")
    with pytest.raises(TypeError, match=r"missing required argument\(s\) \['value'\]"):
        reg.dispatch("text", {}, "t")
    with pytest.raises(TypeError, match="should be a JSON object"):
        reg.dispatch("text", ["x"], "t")


async def test_async_tools_and_adispatch():
    reg = ToolRegistry()

    @reg.tool
    async def later(x: int) -> dict:
        return {"x": x}

    @reg.tool
    def sync(x: int, task_id: str) -> str:
        return f"{x}:{task_id}"

    assert await reg.adispatch("later", {"x": 1}, "t") == '{"x": 1}'
    assert await reg.adispatch("sync", {"x": 2}, "t") == "2:t"
    with pytest.raises(RuntimeError, match="adispatch"):
        reg.dispatch("later", {"x": 1}, "t")  # a running loop in this thread
    with pytest.raises(KeyError):
        await reg.adispatch("missing", {}, "t")


def test_sync_dispatch_of_an_async_tool_outside_a_loop():
    reg = ToolRegistry()

    @reg.tool
    async def later(x: int) -> int:
        return x * 2

    assert reg.dispatch("later", {"x": 4}, "t") == "8"


def test_default_registry_holds_the_builtin_toolsets():
    assert registry.toolsets()["terminal"] == ["terminal", "process"]  # upstream's terminal toolset
    assert registry.toolsets()["file"] == ["read_file", "write_file", "search_files", "patch"]
    schemas, names = registry.resolve(["terminal", "file"])
    assert {"terminal", "read_file", "write_file", "search_files", "patch"} <= names
    terminal = registry.get("terminal").parameters
    assert terminal["required"] == ["command"] and set(terminal["properties"]) == {"command", "timeout"}
    patch = registry.get("patch").parameters
    assert patch["required"] == ["path", "old", "new"]
    assert registry.get("search_files").parameters["properties"]["path"]["default"] == "."


TOOL_MODULE = '''
@reg.tool(toolset="units")
def convert(value: float) -> float:
    """Convert a value."""
    return value * 2
'''


def _import_as(path, module_name, reg):
    """Import ``path`` as ``module_name``, its ``reg`` name bound to ``reg``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    module.reg = reg
    spec.loader.exec_module(module)
    return module


def test_the_same_tool_imported_twice_replaces_itself(tmp_path):
    reg = ToolRegistry()
    reg.tool(lambda: "x", name="first")
    path = tmp_path / "units_env.py"
    path.write_text(TOOL_MODULE)
    one = _import_as(path, "units_env", reg)
    two = _import_as(path, "hermes_conformance_units_env", reg)  # what --hermes-conformance does
    assert one.convert is not two.convert
    assert reg.get("convert").handler is two.convert  # the latest wins
    assert reg.names() == ["first", "convert"]


def test_another_function_under_a_taken_tool_name_still_raises(tmp_path):
    reg = ToolRegistry()
    path = tmp_path / "units_env.py"
    path.write_text(
        TOOL_MODULE + '\n\n@reg.tool(name="convert")\ndef other(value: float) -> float:\n    return value\n'
    )
    with pytest.raises(ToolRegistryError) as info:
        _import_as(path, "units_env", reg)
    message = str(info.value)
    assert "units_env.convert" in message and "units_env.other" in message
    assert "rename one of them" not in message and "only one of them" in message
    (tmp_path / "elsewhere.py").write_text("def convert(value: float) -> float:\n    return value\n")
    elsewhere = _import_as(tmp_path / "elsewhere.py", "elsewhere", reg)
    with pytest.raises(ToolRegistryError, match="rename one of them"):
        reg.tool(elsewhere.convert)
