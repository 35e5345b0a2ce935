"""Whatever a tool does (nest, exit, hang, flood), the rollout ends with a labelled AgentResult and the group's
other rollouts finish; tool results are bounded per call and per turn (the upstream budget contract)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading

import pytest

from hermes_envs.agent import HermesAgentLoop
from hermes_envs.agent.budget import SAVED_TAG, BudgetConfig
from hermes_envs.tools import ToolRegistry, cleanup_sandbox, get_sandbox

from .test_loop import StubServer, completion


def loop_for(server: StubServer, reg: ToolRegistry, **kw) -> HermesAgentLoop:
    schemas, names = reg.resolve()
    return HermesAgentLoop(server, schemas, names, registry=reg, **kw)


def user() -> list[dict]:
    return [{"role": "user", "content": "q"}]


async def test_deeply_nested_arguments_are_a_tool_error_not_a_recursion_error() -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def echo(x: list | None = None) -> str:
        """Echo."""
        return "ran"

    depth = sys.getrecursionlimit() * 4
    nested = '{"x": ' + "[" * depth + "]" * depth + "}"
    server = StubServer(completion("", [("echo", nested)]), completion("done"))
    result = await loop_for(server, reg).run(user())
    assert result.termination == "stop" and result.finished_naturally
    assert "nested too deeply" in result.tool_errors[0].error
    assert "nested too deeply" in json.loads(result.messages[2]["content"])["error"]


@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt()])
async def test_a_tool_that_exits_stops_only_its_own_rollout(exc: BaseException) -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def quit_now() -> str:
        """Exit the process."""
        raise exc

    @reg.tool(toolset="t")
    def fine() -> str:
        """A well-behaved tool."""
        return "ok"

    bad = loop_for(StubServer(completion("", [("quit_now", "{}")]), completion("never")), reg)
    good = [loop_for(StubServer(completion("", [("fine", "{}")]), completion("done")), reg) for _ in range(3)]
    results = await asyncio.gather(bad.run(user()), *(g.run(user()) for g in good))
    assert results[0].termination == "tool_abort"
    assert type(exc).__name__ in (results[0].error or "") and "quit_now" in (results[0].error or "")
    assert [r.termination for r in results[1:]] == ["stop", "stop", "stop"]


async def test_an_async_tool_raising_keyboard_interrupt_does_not_stop_the_event_loop() -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    async def interrupt() -> str:
        """Raise KeyboardInterrupt on the event loop."""
        raise KeyboardInterrupt

    result = await loop_for(StubServer(completion("", [("interrupt", "{}")])), reg).run(user())
    assert result.termination == "tool_abort"
    await asyncio.sleep(0)  # the loop is still running


async def test_a_hanging_tool_is_abandoned_after_tool_timeout_and_the_rollout_goes_on() -> None:
    reg = ToolRegistry()
    release = threading.Event()

    @reg.tool(toolset="t")
    def hang() -> str:
        """Never returns (until the test releases it)."""
        release.wait(timeout=60)
        return "late"

    server = StubServer(completion("", [("hang", "{}")]), completion("gave up"))
    try:
        result = await loop_for(server, reg, tool_timeout=0.05).run(user())
    finally:
        release.set()
    assert result.termination == "stop"
    assert "did not finish within 0.05 s" in result.tool_errors[0].error
    assert result.messages[-1]["content"] == "gave up"


async def test_a_tool_raising_timeout_error_itself_is_not_reported_as_our_timeout() -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def flaky() -> str:
        """Raises its own TimeoutError."""
        raise TimeoutError("upstream API timed out")

    result = await loop_for(StubServer(completion("", [("flaky", "{}")]), completion("ok")), reg).run(user())
    assert result.tool_errors[0].error == "Tool execution failed: TimeoutError: upstream API timed out"


async def test_a_huge_result_is_cut_to_a_preview_without_a_sandbox() -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def flood() -> str:
        """Return 100 MB."""
        return "x" * 100_000_000

    server = StubServer(completion("", [("flood", "{}")]), completion("ok"))
    result = await loop_for(server, reg).run(user())
    content = result.messages[2]["content"]
    assert len(content) < 2_000
    assert "100,000,000 characters" in content and "could not be saved" in content
    assert len(json.dumps(server.requests[1]["messages"])) < 5_000  # the next request stayed small


async def test_a_large_result_is_saved_in_the_sandbox_and_the_model_is_told_where() -> None:
    reg = ToolRegistry()
    text = "\n".join(f"line {i}" for i in range(5_000))

    @reg.tool(toolset="t")
    def dump(task_id: str) -> str:
        """Touch the sandbox, then return a long text."""
        get_sandbox(task_id).write_text("seen.txt", "1")
        return text

    server = StubServer(completion("", [("dump", "{}")]), completion("ok"))
    loop = loop_for(server, reg, budget_config=BudgetConfig(default_result_size=1_000, preview_size=100))
    try:
        result = await loop.run(user())
        content = result.messages[2]["content"]
        assert content.startswith(SAVED_TAG) and "line 0\n" in content and "line 999" not in content
        path = content.split("Full output saved to: ", 1)[1].splitlines()[0]
        assert get_sandbox(loop.task_id).read_text(path) == text
    finally:
        cleanup_sandbox(loop.task_id)


async def test_per_tool_overrides_and_read_file_is_never_cut() -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def read_file(path: str) -> str:
        """Pretend to read a big file."""
        return "r" * 5_000

    @reg.tool(toolset="t")
    def terminal(command: str) -> str:
        """Pretend to run a command."""
        return "t" * 5_000

    calls = [("read_file", '{"path": "a"}'), ("terminal", '{"command": "ls"}')]
    budget = BudgetConfig(default_result_size=100_000, tool_overrides={"terminal": 500, "read_file": 10})
    result = await loop_for(
        StubServer(completion("", calls), completion("ok")), reg, budget_config=budget
    ).run(user())
    assert result.messages[2]["content"] == "r" * 5_000
    assert "Truncated" in result.messages[3]["content"] and len(result.messages[3]["content"]) < 1_000


async def test_the_turn_budget_shrinks_the_largest_results_first() -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def sized(n: int) -> str:
        """Return n characters."""
        return "y" * n

    calls = [("sized", '{"n": 3000}'), ("sized", '{"n": 9000}'), ("sized", '{"n": 4000}')]
    budget = BudgetConfig(default_result_size=100_000, turn_budget=10_000, preview_size=200)
    result = await loop_for(
        StubServer(completion("", calls), completion("ok")), reg, budget_config=budget
    ).run(user())
    sizes = [len(m["content"]) for m in result.messages[2:5]]
    assert sizes[0] == 3000 and sizes[2] == 4000  # within budget once the 9000 one is shrunk
    assert sizes[1] < 1_000
    assert sum(sizes) <= 10_000


async def test_upstream_style_budget_objects_are_accepted() -> None:
    class UpstreamBudget:  # the field names of upstream's tools.budget_config.BudgetConfig
        default_result_size = 50
        turn_budget = 1_000
        preview_size = 10
        tool_overrides: dict = {}

    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def long() -> str:
        """Long."""
        return "z" * 500

    loop = loop_for(
        StubServer(completion("", [("long", "{}")]), completion("ok")), reg, budget_config=UpstreamBudget()
    )
    result = await loop.run(user())
    assert "Truncated" in result.messages[2]["content"]


async def test_an_unserialisable_tool_result_is_a_tool_error() -> None:
    class Registry:
        def dispatch(self, name: str, args: dict, task_id: str) -> object:
            return {"value": object()}

    server = StubServer(completion("", [("odd", "{}")]), completion("ok"))
    result = await HermesAgentLoop(server, [], {"odd"}, registry=Registry()).run(user())
    assert result.termination == "stop"
    assert "not JSON-serialisable" in result.tool_errors[0].error


async def test_a_tool_that_reports_its_own_failure_is_counted_as_a_tool_error() -> None:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def remote(fail: bool) -> str:
        """Report a failure the way upstream's terminal does."""
        if fail:
            return json.dumps({"output": "", "exit_code": -1, "error": "sandbox unreachable"})
        return json.dumps({"output": "ok", "exit_code": 0, "error": None})

    calls = [("remote", '{"fail": true}'), ("remote", '{"fail": false}')]
    result = await loop_for(StubServer(completion("", calls), completion("ok")), reg).run(user())
    assert [e.error for e in result.tool_errors] == ["sandbox unreachable"]
    assert json.loads(result.messages[2]["content"])["exit_code"] == -1  # the model still sees the result


async def test_a_hanging_async_tool_is_cancelled_after_tool_timeout() -> None:
    reg = ToolRegistry()
    cancelled = asyncio.Event()

    @reg.tool(toolset="t")
    async def wait_forever() -> str:
        """Await something that never happens."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    server = StubServer(completion("", [("wait_forever", "{}")]), completion("moved on"))
    result = await loop_for(server, reg, tool_timeout=0.05).run(user())
    assert result.termination == "stop" and cancelled.is_set()
    assert "did not finish within 0.05 s" in result.tool_errors[0].error
