"""Two rules of upstream's loop an env author sees: every result carries the server's ``get_state()`` (Phase 2's
exact tokens), and ``memory`` / ``session_search`` are refused in RL rollouts with upstream's error result."""

from __future__ import annotations

import json
from typing import Any

from hermes_envs.agent import HermesAgentLoop
from hermes_envs.tools import ToolRegistry

from .test_loop import StubServer, completion


class StatefulServer(StubServer):
    """A ManagedServer-like stub: ``get_state()`` returns what the rollout's tokens would be."""

    def get_state(self) -> dict[str, Any]:
        return {"nodes": [{"tokens": [1, 2, 3]}], "requests": len(self.requests)}


async def test_every_result_carries_the_servers_state() -> None:
    answered = await HermesAgentLoop(StatefulServer(completion("done")), [], set()).run([])
    assert answered.managed_state == {"nodes": [{"tokens": [1, 2, 3]}], "requests": 1}
    failed = await HermesAgentLoop(StatefulServer(RuntimeError("down")), [], set()).run([])
    assert failed.managed_state == {"nodes": [{"tokens": [1, 2, 3]}], "requests": 1}
    plain = await HermesAgentLoop(StubServer(completion("done")), [], set()).run([])
    assert plain.managed_state is None  # an OpenAI-type server has no state


async def test_a_get_state_set_on_the_server_instance_is_read_too() -> None:
    """A wrapper or test double that attaches ``get_state`` to its instance (not its class) still gives its state,
    as upstream's loop reads any ``get_state`` the server has; a non-dict answer (a mock's) is not a state."""
    server = StubServer(completion("done"))
    server.get_state = lambda: {"nodes": [{"tokens": [4]}]}  # type: ignore[attr-defined]
    assert (await HermesAgentLoop(server, [], set()).run([])).managed_state == {"nodes": [{"tokens": [4]}]}
    odd = StubServer(completion("done"))
    odd.get_state = lambda: "not a state"  # type: ignore[attr-defined]
    assert (await HermesAgentLoop(odd, [], set()).run([])).managed_state is None


def test_memory_and_session_search_are_refused_without_running_them() -> None:
    import asyncio

    ran: list[str] = []
    registry = ToolRegistry()

    @registry.tool(toolset="memory")
    def memory(action: str) -> str:
        """A memory tool that must not run in RL."""
        ran.append(action)
        return "stored"

    @registry.tool(toolset="memory")
    def session_search(query: str) -> str:
        """Past sessions."""
        ran.append(query)
        return "found"

    schemas, names = registry.resolve()
    server = StubServer(
        completion(calls=[("memory", '{"action": "add"}'), ("session_search", '{"query": "x"}')]),
        completion("ok"),
    )
    result = asyncio.run(HermesAgentLoop(server, schemas, names, registry=registry).run([]))
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [json.loads(m["content"]) for m in tool_messages] == [
        {"error": "Memory is not available in RL environments."},
        {"error": "Session search is not available in RL environments."},
    ]
    assert ran == [] and result.tool_errors == [] and result.finished_naturally
