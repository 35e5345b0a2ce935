"""The ``delegation`` toolset (``delegate_task``): sub-agents with their own context, run through the env's own
model server (the fake one under tests) with the real agent loop.

Each sub-agent gets a fresh conversation, its own task id (its own sandbox, cleaned up when it ends) and the parent's
toolsets unless ``toolsets`` narrows them; it can never delegate, ask the user, write memory or run code (as
upstream). Result as upstream: ``{"results": [{task_index, status, summary, api_calls, duration_seconds}],
"total_duration_seconds"}``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..registry import ToolRegistry
from ._tooling import register_family, schema

__all__ = ["BLOCKED_TOOLS", "MAX_TASKS", "register_delegation_tools"]

BLOCKED_TOOLS = frozenset({"delegate_task", "clarify", "memory", "execute_code"})
MAX_TASKS = 3
DEFAULT_ITERATIONS = 50
_registry: ToolRegistry | None = None


class _EndpointServer:
    """What HermesAgentLoop needs from a server (``await chat_completion(**kw)``), over the bound endpoint."""

    def __init__(self) -> None:
        from .model import model_endpoint

        self.endpoint = model_endpoint("delegate_task")
        self.calls = 0

    async def chat_completion(self, **kwargs: Any) -> Any:
        from openai import AsyncOpenAI

        self.calls += 1
        kwargs.pop("n", None)
        async with AsyncOpenAI(
            base_url=self.endpoint.base_url, api_key=self.endpoint.api_key, max_retries=0
        ) as client:
            return await client.chat.completions.create(model=self.endpoint.model, **kwargs)


def _child_tools(toolsets: list[str] | None) -> tuple[list[dict], set[str]]:
    assert _registry is not None
    schemas, names = _registry.resolve(toolsets or None)
    keep = [s for s in schemas if s["function"]["name"] not in BLOCKED_TOOLS]
    return keep, {s["function"]["name"] for s in keep}


async def _run_child(
    goal: str, context: str, toolsets: list[str] | None, max_turns: int, child_id: str
) -> dict:
    from hermes_envs.agent import HermesAgentLoop, final_response

    from ..sandbox import cleanup_sandbox

    server = _EndpointServer()
    schemas, names = _child_tools(toolsets)
    prompt = f"Your task: {goal}" + (f"\n\nContext:\n{context}" if context else "")
    system = (
        "You are a focused sub-agent. Complete the task with the tools you have, then reply with a concise summary "
        "of what you did and found."
    )
    start = time.monotonic()
    try:
        loop = HermesAgentLoop(server, schemas, names, max_turns=max_turns, task_id=child_id, temperature=0.0)
        result = await loop.run([{"role": "system", "content": system}, {"role": "user", "content": prompt}])
    finally:
        cleanup_sandbox(child_id)
    status = "completed" if result.finished_naturally else ("error" if result.error else "max_iterations")
    entry = {
        "status": status,
        "summary": final_response(result),
        "api_calls": server.calls,
        "duration_seconds": round(time.monotonic() - start, 2),
    }
    if result.error:
        entry["error"] = result.error
    return entry


def delegate_task(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    tasks = args.get("tasks")
    if tasks:
        if not isinstance(tasks, list) or not all(isinstance(t, dict) and t.get("goal") for t in tasks):
            return {"error": "tasks should be a list of objects, each with a 'goal'."}
        specs = tasks[:MAX_TASKS]
    elif args.get("goal"):
        specs = [{"goal": args["goal"], "context": args.get("context"), "toolsets": args.get("toolsets")}]
    else:
        return {"error": "Provide either 'goal' (single task) or 'tasks' (batch)."}
    max_turns = int(args.get("max_iterations") or DEFAULT_ITERATIONS)
    start = time.monotonic()

    async def run_all() -> list[dict]:
        return await asyncio.gather(
            *(
                _run_child(
                    str(spec["goal"]),
                    str(spec.get("context") or args.get("context") or ""),
                    spec.get("toolsets") or args.get("toolsets"),
                    max_turns,
                    f"{task_id}-delegate-{index}-{time.monotonic_ns()}",
                )
                for index, spec in enumerate(specs)
            )
        )

    results = asyncio.run(run_all())  # tools run in worker threads: this is a fresh loop, not the env's
    return {
        "results": [{"task_index": i, **r} for i, r in enumerate(results)],
        "total_duration_seconds": round(time.monotonic() - start, 2),
    }


DESCRIPTION = (
    "Spawn one or more subagents to work on tasks in isolated contexts. Each subagent gets its own conversation, "
    "terminal session, and toolset. Only the final summary is returned -- intermediate tool results never enter "
    "your context window. Single task: provide 'goal'. Batch (parallel, up to 3): provide 'tasks'."
)
PARAMS = schema(
    {
        "goal": {
            "type": "string",
            "description": "What the subagent should accomplish. Be specific and self-contained.",
        },
        "context": {"type": "string", "description": "Background information the subagent needs."},
        "toolsets": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Toolsets to enable for this subagent. Default: inherits your enabled toolsets.",
        },
        "tasks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "goal": {"type": "string", "description": "Task goal"},
                    "context": {"type": "string", "description": "Task-specific context"},
                    "toolsets": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Toolsets for this task",
                    },
                },
                "required": ["goal"],
            },
            "maxItems": MAX_TASKS,
            "description": "Batch mode: up to 3 tasks to run in parallel. When provided, top-level goal/context/"
            "toolsets are ignored.",
        },
        "max_iterations": {
            "type": "integer",
            "description": "Max tool-calling turns per subagent (default: 50).",
        },
    }
)


def register_delegation_tools(target: ToolRegistry) -> None:
    global _registry
    _registry = target
    register_family(
        target, "delegation", "delegation", [("delegate_task", DESCRIPTION, PARAMS, delegate_task)]
    )
