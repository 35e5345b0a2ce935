"""Stand-in items: what the dynamic checks run on when ``setup()`` cannot load the env's own data offline.

An env whose data lives on the Hub (or behind a CLI, or in a file that is not there) fails HC201 offline; without
items every prompt, reward, trajectory and isolation check would be skipped behind that one blocker. With stand-in
items they still run and report, and each finding made on them says so. The items come from ``--items FILE.jsonl``
(``items`` setting), else from the env's own built-in samples (a module or class attribute such as
``FALLBACK_ITEMS`` / ``SAMPLE_PROBLEMS``: a non-empty list of dicts).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_envs.errors import ConfigError

#: Names of module / class attributes that hold an env's own built-in items.
_SAMPLE_NAME = re.compile(r"(sample|fallback|builtin|built_in|example|demo|offline)", re.IGNORECASE)

#: Checks that judge the env's own data (its split, its cycle, its setup time): never run on stand-in items.
NEEDS_OWN_DATA = frozenset({"HC202", "HC203", "HC204", "HC205"})


@dataclass(frozen=True)
class StandIns:
    """The stand-in items and where they came from (named in every finding made on them)."""

    items: tuple[Any, ...]
    source: str


def read_items_file(path: Path) -> list[Any]:
    """The items of a JSONL file, one JSON value a line (blank lines skipped); ConfigError naming a bad line."""
    items: list[Any] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"the items file {path} should be readable; {exc}. Fix: check the path.") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"the items file {path.name} should hold one JSON item a line; line {number} is not JSON ({exc.msg})."
                " Fix: write each item as one JSON object on its own line."
            ) from None
    if not items:
        raise ConfigError(
            f"the items file {path.name} should hold at least one item; it is empty. Fix: add items."
        )
    return items


def builtin_samples(module: Any, cls: type | None) -> StandIns | None:
    """The env's own built-in items: the first class or module attribute named like a sample / fallback list whose
    value is a non-empty list (or tuple) of dicts. None when it has none."""
    for owner, label in ((cls, getattr(cls, "__name__", "")), (module, "the module")):
        if owner is None:
            continue
        for name, value in sorted(vars(owner).items()):
            if name.startswith("__") or not _SAMPLE_NAME.search(name):
                continue
            if (
                isinstance(value, (list, tuple))
                and value
                and all(isinstance(v, dict) for v in value)
                and not all(
                    {"role", "content"} <= set(v) for v in value
                )  # chat messages (few-shot), not items
            ):
                where = f"{label}.{name}" if owner is cls else name
                return StandIns(tuple(value), f"the env's own built-in samples ({where}, {len(value)} items)")
    return None


def stand_ins(items_file: str | None, module: Any, cls: type | None) -> StandIns | None:
    """The stand-in items of a run: the ``--items`` file when given, else the env's built-in samples, else None."""
    if items_file:
        items = read_items_file(Path(items_file))
        return StandIns(tuple(items), f"{Path(items_file).name} (--items, {len(items)} items)")
    return builtin_samples(module, cls)


__all__ = ["NEEDS_OWN_DATA", "StandIns", "builtin_samples", "read_items_file", "stand_ins"]
