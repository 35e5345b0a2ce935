"""The ``memory`` toolset (``memory``): bounded notes (``memory``) and a user profile (``user``), per rollout.

Upstream keeps them in MEMORY.md / USER.md across sessions; an RL rollout is one session, so ours live with the
task (a reward can read them with :func:`memory_entries`). Actions ``add``, ``replace`` (``old_text`` picks the
entry), ``remove``; results ``{"success", "target", "entries", "usage"}`` as upstream.
"""

from __future__ import annotations

from typing import Any

from ..registry import ToolRegistry
from ._taskstate import TaskStore
from ._tooling import register_family, schema

__all__ = ["LIMITS", "memory_entries", "register_memory_tools"]

LIMITS = {"memory": 2200, "user": 1375}
_STORE: TaskStore[dict[str, list[str]]] = TaskStore(lambda: {"memory": [], "user": []})


def memory_entries(task_id: str, target: str = "memory") -> list[str]:
    """The entries of ``target`` ("memory" or "user") written by the rollout of ``task_id``."""
    return list(_STORE.get(task_id)[target])


def memory(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    action, target = str(args.get("action", "")), str(args.get("target", "memory") or "memory")
    content, old = str(args.get("content") or "").strip(), str(args.get("old_text") or "").strip()
    if target not in LIMITS:
        return {"success": False, "error": f"Invalid target '{target}'. Use 'memory' or 'user'."}
    entries = _STORE.get(task_id)[target]
    limit = LIMITS[target]

    def result(**extra: Any) -> dict[str, Any]:
        used = len("\n§\n".join(entries))
        return {
            "success": True,
            "target": target,
            "entries": list(entries),
            "usage": f"{used}/{limit}",
            **extra,
        }

    def fits(candidate: list[str]) -> bool:
        return len("\n§\n".join(candidate)) <= limit

    if action == "add":
        if not content:
            return {"success": False, "error": "Content is required for 'add'."}
        if content in entries:
            return result(message="Entry already exists (no duplicate added).")
        if not fits([*entries, content]):
            return {
                "success": False,
                "error": f"Memory at capacity ({limit} chars). Replace or remove entries first.",
            }
        entries.append(content)
        return result(message="Entry added.")
    if action in ("replace", "remove"):
        if not old:
            return {"success": False, "error": f"old_text is required for '{action}'."}
        matches = [i for i, e in enumerate(entries) if old in e]
        if len(matches) != 1:
            return {
                "success": False,
                "error": f"old_text should match exactly one entry; it matches {len(matches)}. Give a longer, "
                "unique substring.",
            }
        if action == "remove":
            del entries[matches[0]]
            return result(message="Entry removed.")
        if not content:
            return {"success": False, "error": "Content is required for 'replace'."}
        candidate = list(entries)
        candidate[matches[0]] = content
        if not fits(candidate):
            return {"success": False, "error": f"Replacement would exceed the {limit} character limit."}
        entries[matches[0]] = content
        return result(message="Entry replaced.")
    return {"success": False, "error": f"Unknown action '{action}'. Use: add, replace, remove"}


DESCRIPTION = (
    "Save durable information to persistent memory. Memory has two targets: 'memory' for your personal notes and "
    "'user' for what you learn about the user. Actions: add, replace (old_text identifies the entry), remove."
)
PARAMS = schema(
    {
        "action": {
            "type": "string",
            "enum": ["add", "replace", "remove"],
            "description": "The action to perform.",
        },
        "target": {
            "type": "string",
            "enum": ["memory", "user"],
            "description": "Which memory store: 'memory' for personal notes, 'user' for user profile.",
        },
        "content": {"type": "string", "description": "The entry content. Required for 'add' and 'replace'."},
        "old_text": {
            "type": "string",
            "description": "Short unique substring identifying the entry to replace or remove.",
        },
    },
    ["action", "target"],
)


def register_memory_tools(target: ToolRegistry) -> None:
    register_family(target, "memory", "memory", [("memory", DESCRIPTION, PARAMS, memory)])
