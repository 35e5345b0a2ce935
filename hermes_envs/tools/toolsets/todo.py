"""The ``todo`` toolset (``todo``): the agent's task list for multi-step work, one per rollout.

As upstream: ``todos`` given writes (``merge`` updates items by id, else replaces the list), omitted reads; every
call returns ``{"todos": [...], "summary": {total, pending, in_progress, completed, cancelled}}``.
"""

from __future__ import annotations

from typing import Any

from ..registry import ToolRegistry
from ._taskstate import TaskStore
from ._tooling import register_family, schema

__all__ = ["STATUSES", "register_todo_tools", "todo_list"]

STATUSES = ("pending", "in_progress", "completed", "cancelled")
MAX_ITEMS = 256
MAX_CONTENT = 4000

_STORE: TaskStore[list[dict[str, str]]] = TaskStore(list)


def _clean(item: Any) -> dict[str, str]:
    if not isinstance(item, dict):
        return {"id": "?", "content": "(invalid item)", "status": "pending"}
    status = str(item.get("status", "pending")).strip().lower()
    return {
        "id": str(item.get("id", "")).strip() or "?",
        "content": (str(item.get("content", "")).strip() or "(no description)")[:MAX_CONTENT],
        "status": status if status in STATUSES else "pending",
    }


def todo_list(task_id: str) -> list[dict[str, str]]:
    """A copy of the task list of ``task_id`` (for rewards)."""
    return [dict(i) for i in _STORE.get(task_id)]


def todo(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    items = _STORE.get(task_id)
    todos = args.get("todos")
    if todos is not None:
        if not isinstance(todos, list):
            return {"error": f"todos must be a list, got {type(todos).__name__}"}
        if args.get("merge"):
            by_id = {i["id"]: i for i in items}
            for raw in todos:
                if not isinstance(raw, dict) or not str(raw.get("id", "")).strip():
                    continue
                key = str(raw["id"]).strip()
                if key in by_id:
                    if raw.get("content"):
                        by_id[key]["content"] = str(raw["content"]).strip()[:MAX_CONTENT]
                    if str(raw.get("status", "")).lower() in STATUSES:
                        by_id[key]["status"] = str(raw["status"]).lower()
                else:
                    items.append(_clean(raw))
                    by_id[key] = items[-1]
        else:
            last = {(_clean(t)["id"]): _clean(t) for t in todos}  # a repeated id keeps its last version
            items[:] = list(last.values())
        del items[MAX_ITEMS:]
    counts = {s: sum(1 for i in items if i["status"] == s) for s in STATUSES}
    return {"todos": [dict(i) for i in items], "summary": {"total": len(items), **counts}}


DESCRIPTION = (
    "Manage your task list for the current session. Use for complex tasks with 3+ steps or when the user provides "
    "multiple tasks. Call with no parameters to read the current list. Writing: provide 'todos' array to "
    "create/update items; merge=false (default) replaces the entire list, merge=true updates existing items by id "
    "and adds new ones. Each item: {id: string, content: string, status: pending|in_progress|completed|cancelled}. "
    "Only ONE item in_progress at a time. Mark items completed immediately when done. Always returns the full "
    "current list."
)
PARAMS = schema(
    {
        "todos": {
            "type": "array",
            "description": "Task items to write. Omit to read current list.",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "Unique item identifier"},
                    "content": {"type": "string", "description": "Task description"},
                    "status": {"type": "string", "enum": list(STATUSES), "description": "Current status"},
                },
                "required": ["id", "content", "status"],
            },
        },
        "merge": {
            "type": "boolean",
            "description": "true: update existing items by id, add new ones. false (default): replace the entire "
            "list.",
            "default": False,
        },
    }
)


def register_todo_tools(target: ToolRegistry) -> None:
    register_family(target, "todo", "todo", [("todo", DESCRIPTION, PARAMS, todo)])
