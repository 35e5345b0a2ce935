"""The ``skills`` toolset (``skills_list``, ``skill_view``, ``skill_manage``) over a folder of skills.

A skill is a folder holding ``SKILL.md`` (YAML front matter ``name``, ``description``, optional ``category``) and
any linked files. The library is read from ``HERMES_SKILLS_DIR`` (default: none, an empty library); skills the
agent creates or edits with ``skill_manage`` go to ``skills/`` in the task's sandbox and shadow the library, so a
rollout never changes the shared library and a reward can inspect what it wrote.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from ..registry import ToolRegistry
from ._tooling import register_family, schema

__all__ = ["register_skills_tools"]

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def _meta(text: str) -> dict:
    match = _FRONT.match(text)
    if not match:
        return {}
    data = yaml.safe_load(match.group(1)) or {}
    return data if isinstance(data, dict) else {}


def _roots(task_id: str) -> list[Path]:
    from ..sandbox import get_sandbox

    box = get_sandbox(task_id)
    assert box is not None
    roots = [box.workdir / "skills"]
    library = os.environ.get("HERMES_SKILLS_DIR", "").strip()
    if library:
        roots.append(Path(library).expanduser())
    return roots


def _find(task_id: str, name: str) -> Path | None:
    for root in _roots(task_id):
        folder = root / name
        if (folder / "SKILL.md").is_file():
            return folder
    return None


def skills_list(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    category = args.get("category")
    found: dict[str, dict] = {}
    for root in _roots(task_id):
        if not root.is_dir():
            continue
        for skill_md in sorted(root.glob("*/SKILL.md")):
            name = skill_md.parent.name
            if name in found:
                continue
            meta = _meta(skill_md.read_text(encoding="utf-8"))
            entry = {
                "name": str(meta.get("name") or name),
                "description": str(meta.get("description") or ""),
                "category": meta.get("category"),
            }
            if category and entry["category"] != category:
                continue
            found[name] = entry
    skills = [found[k] for k in sorted(found)]
    return {"success": True, "skills": skills, "count": len(skills)}


def skill_view(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    name = str(args.get("name", "")).strip()
    folder = _find(task_id, name)
    if folder is None:
        return {
            "success": False,
            "error": f"Skill '{name}' not found. Use skills_list to see the available skills.",
        }
    file_path = args.get("file_path")
    target = folder / (file_path or "SKILL.md")
    if not target.resolve().is_relative_to(folder.resolve()) or not target.is_file():
        return {"success": False, "error": f"File '{file_path}' not found in skill '{name}'."}
    linked = sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != "SKILL.md"
    )
    return {
        "success": True,
        "name": name,
        "content": target.read_text(encoding="utf-8"),
        "linked_files": linked,
    }


def skill_manage(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    action, name = str(args.get("action", "")), str(args.get("name", "")).strip()
    if not _NAME.fullmatch(name):
        return {
            "success": False,
            "error": f"Invalid skill name '{name}': use lowercase letters, digits, '-', '_', '.'.",
        }
    own = _roots(task_id)[0] / name
    content = args.get("content")
    if action in ("create", "edit"):
        if not isinstance(content, str) or not _meta(content).get("description"):
            return {
                "success": False,
                "error": "content should be the full SKILL.md with YAML front matter (name, description).",
            }
        if action == "create" and _find(task_id, name) is not None:
            return {
                "success": False,
                "error": f"Skill '{name}' already exists. Use action='edit' to change it.",
            }
        own.mkdir(parents=True, exist_ok=True)
        (own / "SKILL.md").write_text(content, encoding="utf-8")
        return {"success": True, "message": f"Skill '{name}' {action}d."}
    if action == "patch":
        folder = _find(task_id, name)
        old, new = args.get("old_string"), args.get("new_string")
        if folder is None or not isinstance(old, str) or not isinstance(new, str):
            return {"success": False, "error": "patch needs an existing skill, old_string and new_string."}
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        if text.count(old) != 1:
            return {
                "success": False,
                "error": f"old_string should occur once in SKILL.md; it occurs {text.count(old)} times.",
            }
        if folder != own:
            shutil.copytree(folder, own, dirs_exist_ok=True)
        (own / "SKILL.md").write_text(text.replace(old, new, 1), encoding="utf-8")
        return {"success": True, "message": f"Skill '{name}' patched."}
    if action == "delete":
        if not own.is_dir():
            return {
                "success": False,
                "error": f"Skill '{name}' was not created in this session; only those can be deleted.",
            }
        shutil.rmtree(own)
        return {"success": True, "message": f"Skill '{name}' deleted."}
    return {"success": False, "error": f"Unknown action '{action}'. Use: create, edit, patch, delete"}


TOOLS = [
    (
        "skills_list",
        "List available skills (name + description). Use skill_view(name) to load full content.",
        schema({"category": {"type": "string", "description": "Optional category filter to narrow results"}}),
        skills_list,
    ),
    (
        "skill_view",
        "Skills allow for loading information about specific tasks and workflows. Load a skill's full content or "
        "access its linked files.",
        schema(
            {
                "name": {
                    "type": "string",
                    "description": "The skill name (use skills_list to see available skills)",
                },
                "file_path": {
                    "type": "string",
                    "description": "OPTIONAL: Path to a linked file within the skill (e.g., 'references/api.md').",
                },
            },
            ["name"],
        ),
        skill_view,
    ),
    (
        "skill_manage",
        "Manage skills (create, update, delete). Skills are your procedural memory -- reusable approaches for "
        "recurring task types. Actions: create (full SKILL.md), edit (full rewrite), patch (old_string/new_string), "
        "delete.",
        schema(
            {
                "action": {
                    "type": "string",
                    "enum": ["create", "patch", "edit", "delete"],
                    "description": "The action to perform.",
                },
                "name": {
                    "type": "string",
                    "description": "Skill name (lowercase, hyphens/underscores, max 64 chars).",
                },
                "content": {
                    "type": "string",
                    "description": "Full SKILL.md content (YAML frontmatter + markdown body).",
                },
                "old_string": {
                    "type": "string",
                    "description": "Text to find in the file (required for 'patch').",
                },
                "new_string": {"type": "string", "description": "Replacement text (required for 'patch')."},
            },
            ["action", "name"],
        ),
        skill_manage,
    ),
]


def register_skills_tools(target: ToolRegistry) -> None:
    register_family(target, "skills", "skills", TOOLS)
