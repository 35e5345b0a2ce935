"""The ``skills`` toolset (``skills_list``, ``skill_view``, ``skill_manage``) over a folder of skills.

A skill is a folder holding ``SKILL.md`` (YAML front matter ``name``, ``description``, optional ``category``) and
any linked files. The library is read from ``HERMES_SKILLS_DIR`` (default: none, an empty library); skills the
agent creates or edits with ``skill_manage`` go to ``skills/`` in the task's sandbox and shadow the library, so a
rollout never changes the shared library and a reward can inspect what it wrote. Those are read, written and
deleted by the file tools' path rule (nothing outside the task, no link followed out), and skill names are plain
names (no ``/`` or ``..``), so a link the agent plants under ``skills/`` never reaches a host file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from hermes_envs.errors import SandboxError

from ..registry import ToolRegistry
from ._tooling import register_family, schema

__all__ = ["register_skills_tools"]

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_MAX_SKILL_BYTES = 1 << 20


def _meta(text: str) -> dict:
    match = _FRONT.match(text)
    if not match:
        return {}
    data = yaml.safe_load(match.group(1)) or {}
    return data if isinstance(data, dict) else {}


_OWN = "skills"  # the task's own skills, relative to its working directory


def _box(task_id: str) -> Any:
    from ..sandbox import get_sandbox

    box = get_sandbox(task_id)
    assert box is not None
    return box


def _library() -> Path | None:
    library = os.environ.get("HERMES_SKILLS_DIR", "").strip()
    return Path(library).expanduser() if library else None


def _own_files(box: Any, name: str | None = None) -> dict[tuple[str, ...], bytes]:
    """{parts below ``skills/``: content} of the task's own skills (all, or skill ``name``), read by the file
    tools' rule: nothing outside the task, no link followed out, only regular files."""
    where = _OWN if name is None else f"{_OWN}/{name}"
    try:
        if not box.files.is_dir(where):
            return {}
        with box.files.walk(_OWN) as top:
            depth = len(top.parts)
        return {
            tuple(parts[depth:]): data for parts, data in box.files.files(where, max_bytes=_MAX_SKILL_BYTES)
        }
    except (OSError, SandboxError):  # e.g. skills/ made a link out of the task: it has no skills
        return {}


def _own_skill(box: Any, name: str) -> str | None:
    try:
        data, _size = box.files.read(f"{_OWN}/{name}/SKILL.md", _MAX_SKILL_BYTES)
    except (OSError, SandboxError):
        return None
    return data.decode("utf-8", errors="replace")


def _library_skill(name: str) -> Path | None:
    library = _library()
    folder = library / name if library is not None else None
    return folder if folder is not None and (folder / "SKILL.md").is_file() else None


def _exists(box: Any, name: str) -> bool:
    return _own_skill(box, name) is not None or _library_skill(name) is not None


def _bad_name(name: str) -> dict[str, Any] | None:
    if _NAME.fullmatch(name) and name not in (".", ".."):
        return None
    return {
        "success": False,
        "error": f"Invalid skill name '{name}': use lowercase letters, digits, '-', '_', '.' (no '/' or '..').",
    }


def skills_list(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    category = args.get("category")
    texts: dict[str, str] = {}
    for parts, data in sorted(_own_files(_box(task_id)).items()):
        if len(parts) == 2 and parts[1] == "SKILL.md":
            texts.setdefault(parts[0], data.decode("utf-8", errors="replace"))
    library = _library()
    if library is not None and library.is_dir():
        for skill_md in sorted(library.glob("*/SKILL.md")):
            texts.setdefault(skill_md.parent.name, skill_md.read_text(encoding="utf-8"))
    found: dict[str, dict] = {}
    for name, text in texts.items():
        meta = _meta(text)
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
    bad = _bad_name(name)
    if bad is not None:
        return bad
    box = _box(task_id)
    file_path = args.get("file_path") or "SKILL.md"
    inner = [p for p in str(file_path).split("/") if p not in ("", ".")]
    if str(file_path).startswith("/") or ".." in inner or not inner:
        return {"success": False, "error": f"File '{file_path}' not found in skill '{name}'."}
    not_found = {"success": False, "error": f"File '{file_path}' not found in skill '{name}'."}
    if _own_skill(box, name) is not None:
        files = {"/".join(parts[1:]): data for parts, data in _own_files(box, name).items()}
    else:
        folder = _library_skill(name)
        if folder is None:
            return {
                "success": False,
                "error": f"Skill '{name}' not found. Use skills_list to see the available skills.",
            }
        files = {}
        root = folder.resolve()
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.resolve().is_relative_to(root):
                files[path.relative_to(folder).as_posix()] = path.read_bytes()
    content = files.get("/".join(inner))
    if content is None:
        return not_found
    linked = sorted(rel for rel in files if rel != "SKILL.md")
    return {
        "success": True,
        "name": name,
        "content": content.decode("utf-8", errors="replace"),
        "linked_files": linked,
    }


def skill_manage(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    try:
        return _manage(args, task_id)
    except (OSError, SandboxError) as exc:  # e.g. skills/ links out of the task: refused as by the file tools
        return {"success": False, "error": f"Skill not changed: {exc}"}


def _manage(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    action, name = str(args.get("action", "")), str(args.get("name", "")).strip()
    bad = _bad_name(name)
    if bad is not None:
        return bad
    box = _box(task_id)
    own_md = f"{_OWN}/{name}/SKILL.md"
    content = args.get("content")
    if action in ("create", "edit"):
        if not isinstance(content, str) or not _meta(content).get("description"):
            return {
                "success": False,
                "error": "content should be the full SKILL.md with YAML front matter (name, description).",
            }
        if action == "create" and _exists(box, name):
            return {
                "success": False,
                "error": f"Skill '{name}' already exists. Use action='edit' to change it.",
            }
        box.write_bytes(own_md, content.encode("utf-8"))
        return {
            "success": True,
            "message": f"Skill '{name}' {'created' if action == 'create' else 'edited'}.",
        }
    if action == "patch":
        old, new = args.get("old_string"), args.get("new_string")
        text = _own_skill(box, name)
        library = _library_skill(name) if text is None else None
        if library is not None:
            text = (library / "SKILL.md").read_text(encoding="utf-8")
        if text is None or not isinstance(old, str) or not isinstance(new, str):
            return {"success": False, "error": "patch needs an existing skill, old_string and new_string."}
        if text.count(old) != 1:
            return {
                "success": False,
                "error": f"old_string should occur once in SKILL.md; it occurs {text.count(old)} times.",
            }
        if library is not None:  # the task's own copy of the library skill, linked files too
            root = library.resolve()
            for path in sorted(library.rglob("*")):
                if path.is_file() and path.name != "SKILL.md" and path.resolve().is_relative_to(root):
                    box.write_bytes(
                        f"{_OWN}/{name}/{path.relative_to(library).as_posix()}", path.read_bytes()
                    )
        box.write_bytes(own_md, text.replace(old, new, 1).encode("utf-8"))
        return {"success": True, "message": f"Skill '{name}' patched."}
    if action == "delete":
        try:
            own = box.files.is_dir(f"{_OWN}/{name}")
        except (OSError, SandboxError):
            own = False
        if not own:
            return {
                "success": False,
                "error": f"Skill '{name}' was not created in this session; only those can be deleted.",
            }
        box.files.remove(f"{_OWN}/{name}")
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
