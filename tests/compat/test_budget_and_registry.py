"""``tools.budget_config`` and ``tools.registry`` as upstream's: the current defaults, the context-window scaling,
and a tool registered upstream's way (one args dict, ``max_result_size_chars``) offered, dispatched and budgeted."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import environments  # noqa: F401  (installs the tools.* stand-ins, as an upstream env file's first import does)

# isort: split
from tools.budget_config import DEFAULT_BUDGET, BudgetConfig, budget_for_context_window
from tools.registry import registry

from hermes_envs.tools import registry as ours


@pytest.fixture
def big_tool() -> Iterator[str]:
    """``big_dump`` registered upstream's way, declaring results up to 1 000 000 characters."""
    schema = {
        "name": "big_dump",
        "description": "Dump n characters.",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    }

    def handler(args: dict, **kwargs: object) -> str:
        return json.dumps({"text": "x" * int(args["n"]), "task": kwargs.get("task_id")})

    registry.register(
        name="big_dump", toolset="dumps", schema=schema, handler=handler, max_result_size_chars=10**6
    )
    yield "big_dump"
    registry.deregister("big_dump")


def test_defaults_are_upstreams_current_ones() -> None:
    assert (DEFAULT_BUDGET.default_result_size, DEFAULT_BUDGET.turn_budget, DEFAULT_BUDGET.preview_size) == (
        32_768,
        65_536,
        1_500,
    )
    assert DEFAULT_BUDGET == BudgetConfig()


@pytest.mark.parametrize(
    ("tokens", "result", "turn"),
    [
        (None, 32_768, 65_536),
        (0, 32_768, 65_536),
        (1_000_000, 32_768, 65_536),  # capped at the defaults
        (16_384, 9_830, 19_660),  # 15% / 30% of 4 characters per token
        (4_000, 8_000, 16_000),  # floored
    ],
)
def test_budget_for_context_window_scales_caps_and_floors(tokens: int | None, result: int, turn: int) -> None:
    budget = budget_for_context_window(tokens)
    assert (budget.default_result_size, budget.turn_budget) == (result, turn)
    assert isinstance(budget, BudgetConfig)
    if not tokens:
        assert budget is DEFAULT_BUDGET


def test_thresholds_pinned_then_override_then_mcp_then_the_tools_own_size_capped(big_tool: str) -> None:
    budget = BudgetConfig(default_result_size=30_000, tool_overrides={"terminal": 500, "read_file": 1})
    assert budget.resolve_threshold("read_file") == float("inf")
    assert budget.resolve_threshold("terminal") == 500
    assert budget.resolve_threshold("mcp_search") == 30_000  # 50 000, capped at the default
    assert BudgetConfig().resolve_threshold("mcp_search") == 32_768
    assert budget.resolve_threshold(big_tool) == 30_000  # the tool's 1 000 000, capped
    assert budget.resolve_threshold("unknown_tool") == 30_000
    assert registry.get_max_result_size(big_tool, default=7) == 10**6
    assert registry.get_max_result_size("unknown_tool", default=7) == 7


def test_a_tool_registered_upstreams_way_is_offered_and_dispatched(big_tool: str) -> None:
    schemas, names = ours.resolve(["dumps"])
    assert names == {big_tool} and schemas[0]["function"]["parameters"]["required"] == ["n"]
    assert registry.get_toolset_for_tool(big_tool) == "dumps" and big_tool in registry.get_all_tool_names()
    assert json.loads(registry.dispatch(big_tool, {"n": 3}, task_id="t1")) == {"text": "xxx", "task": "t1"}
    assert json.loads(ours.dispatch(big_tool, {"n": 2}, "t2")) == {"text": "xx", "task": "t2"}
    failed = json.loads(registry.dispatch(big_tool, {}, task_id="t1"))
    assert failed["error"].startswith("Tool execution failed: KeyError")
    assert "Unknown tool" in json.loads(registry.dispatch("no_such_tool", {}))["error"]
