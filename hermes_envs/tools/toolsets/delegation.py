"""The ``delegation`` toolset (``delegate_task``): sub-agents with their own context, run through the env's own
model server (the fake one under tests), each in a loop of its own.

Each sub-agent gets a fresh conversation, its own task id (its own sandbox, cleaned up when it ends) and the parent's
tools (as the agent loop offered them) unless ``toolsets`` narrows them, never more; it can never delegate, ask the
user, write memory or run code (as upstream). A sub-agent still running at the delegation timeout is stopped: no
further model or tool call. Result as upstream: ``{"results": [{task_index, status, summary, api_calls, duration_seconds}],
"total_duration_seconds"}``.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from ..registry import ToolRegistry, call_abandoned, offered_tools
from ._limits import ToolBackendError, timeout_for
from ._tooling import register_family, schema

__all__ = ["BLOCKED_TOOLS", "MAX_TASKS", "register_delegation_tools"]

BLOCKED_TOOLS = frozenset({"delegate_task", "clarify", "memory", "execute_code"})
MAX_TASKS = 3
DEFAULT_ITERATIONS = 50
_MARGIN = 2.0  # seconds before the delegation timeout at which sub-agents stop
_TIMED_OUT = "the sub-agent ran out of the delegation time limit and was stopped"
_registry: ToolRegistry | None = None


def _child_tools(toolsets: list[str] | None) -> tuple[list[dict], set[str]]:
    """The sub-agent's tools: the parent's (the agent loop says which, :func:`offered_tools`), narrowed to
    ``toolsets`` when given, never more; minus :data:`BLOCKED_TOOLS`. Outside an agent loop there is no parent:
    ``toolsets``, else every registered tool."""
    assert _registry is not None
    schemas, _names = _registry.resolve(toolsets or None)
    parent = offered_tools()
    keep = [
        s
        for s in schemas
        if s["function"]["name"] not in BLOCKED_TOOLS and (parent is None or s["function"]["name"] in parent)
    ]
    return keep, {s["function"]["name"] for s in keep}


def _tool_message(call: dict[str, Any], names: set[str], child_id: str) -> dict[str, Any]:
    function = call.get("function") or {}
    name, raw = function.get("name", ""), function.get("arguments") or "{}"
    assert _registry is not None
    try:
        if name not in names:
            raise KeyError(f"Unknown tool '{name}'. Available tools: {sorted(names)}")
        args = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(args, dict):
            raise TypeError("Tool arguments must be a JSON object.")
        content = _registry.dispatch(name, args, child_id)
    except Exception as exc:  # the sub-agent sees the error, as the main loop's model would
        content = json.dumps({"error": f"Tool execution failed: {type(exc).__name__}: {exc}"})
    return {"role": "tool", "tool_call_id": call.get("id", ""), "content": content}


def _run_child(
    goal: str,
    context: str,
    schemas: list[dict],
    names: set[str],
    max_turns: int,
    child_id: str,
    deadline: float,
    stop: threading.Event,
) -> dict:
    """A sub-agent's turns: ask the model, run the tools it calls, until it answers without tools, or until
    ``deadline`` / ``stop`` (the delegate_task call timed out): then it makes no further model or tool call.

    A loop of its own (not HermesAgentLoop: tools sit below the agent layer), synchronous like every tool; the
    model's tool calls come from the server's ``tool_calls`` (the env's server parses them)."""
    from ..sandbox import cleanup_sandbox
    from .model import chat

    prompt = f"Your task: {goal}" + (f"\n\nContext:\n{context}" if context else "")
    system = (
        "You are a focused sub-agent. Complete the task with the tools you have, then reply with a concise summary "
        "of what you did and found."
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": prompt},
    ]
    start = time.monotonic()
    calls, status, summary, error = 0, "max_iterations", "", None
    try:
        for _turn in range(max_turns):
            left = deadline - time.monotonic()
            if stop.is_set() or left <= 0:
                status, error = "timeout", _TIMED_OUT
                break
            try:
                reply = chat("delegate_task", messages, timeout=left, tools=schemas or None)
            except ToolBackendError as exc:
                late = stop.is_set() or time.monotonic() >= deadline  # the call ran into the deadline
                status, error = ("timeout", _TIMED_OUT) if late else ("error", str(exc))
                break
            if stop.is_set():  # the answer came after the call was given up: nobody reads it
                status, error = "timeout", _TIMED_OUT
                break
            calls += 1
            tool_calls = reply.get("tool_calls") or []
            content = reply.get("content") or ""
            messages.append(
                {
                    "role": "assistant",
                    "content": content,
                    **({"tool_calls": tool_calls} if tool_calls else {}),
                }
            )
            if content.strip():
                summary = content
            if not tool_calls:
                status = "completed"
                break
            for call in tool_calls:
                if stop.is_set() or time.monotonic() >= deadline:
                    break
                messages.append(_tool_message(call, names, child_id))
    finally:
        cleanup_sandbox(child_id)
    entry: dict[str, Any] = {
        "status": status,
        "summary": summary,
        "api_calls": calls,
        "duration_seconds": round(time.monotonic() - start, 2),
    }
    if error:
        entry["error"] = error
    return entry


def _relay(abandoned: threading.Event, stop: threading.Event) -> None:
    """Set ``stop`` once ``abandoned`` is set (checking every 0.1 s until ``stop`` is set anyway)."""
    while not stop.is_set():
        if abandoned.wait(0.1):
            stop.set()


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
    # the family's timeout abandons this call at start + its seconds: the sub-agents stop a little before, so their
    # summaries come back, and whatever still runs then is told to stop (no further model or tool call)
    seconds = timeout_for("delegation")
    deadline = start + max(seconds - _MARGIN, seconds / 2)
    tools = [_child_tools(spec.get("toolsets") or args.get("toolsets")) for spec in specs]
    stop = threading.Event()
    abandoned = call_abandoned()  # the agent loop gave this call up (its own tool timeout): stop as well
    if abandoned is not None:
        threading.Thread(
            target=_relay, args=(abandoned, stop), daemon=True, name="hermes-delegate-watch"
        ).start()
    pool = ThreadPoolExecutor(max_workers=len(specs), thread_name_prefix="hermes-delegate")
    try:
        futures = [
            pool.submit(
                _run_child,
                str(spec["goal"]),
                str(spec.get("context") or args.get("context") or ""),
                *tools[index],
                max_turns,
                f"{task_id}-delegate-{index}-{time.monotonic_ns()}",
                deadline,
                stop,
            )
            for index, spec in enumerate(specs)
        ]
        results = []
        for future in futures:
            try:
                results.append(future.result(timeout=max(0.0, deadline - time.monotonic()) + _MARGIN / 2))
            except FutureTimeout:
                stop.set()
                results.append({"status": "timeout", "summary": "", "api_calls": None, "error": _TIMED_OUT})
    finally:
        stop.set()  # also when this call itself is abandoned or fails: the sub-agents end at their next step
        pool.shutdown(wait=False)
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
