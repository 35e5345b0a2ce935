"""Read atroposlib's process-mode JSONL (one scored group per line) into rollouts the viewer can show.

Each line holds parallel lists per rollout: ``tokens``, ``masks`` (``-100`` = not trained), ``scores`` and, when the
env keeps them, ``messages`` (the chat transcript with tool calls and tool results).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_envs.errors import HermesEnvsError

#: atroposlib's mask value for a token that is not trained on (prompt, tool output).
MASKED = -100


class GroupFileError(HermesEnvsError, ValueError):
    """A line of a groups JSONL file that is not a scored group."""


@dataclass
class Rollout:
    """One rollout of a group: its transcript, its tokens with their masks, and its score."""

    group: int
    index: int
    score: float | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    masks: list[int] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        """The HTML id of the rollout, so findings can link to it."""
        return f"g{self.group}-r{self.index}"

    @property
    def trained(self) -> int:
        return sum(1 for m in self.masks if m != MASKED)


@dataclass
class Group:
    """One scored group (one JSONL line)."""

    index: int
    rollouts: list[Rollout]

    @property
    def scores(self) -> list[float | None]:
        return [r.score for r in self.rollouts]


def _score(value: Any) -> float | None:
    """The score as a float (NaN and infinities kept: the viewer reports them); None when it is not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def parse_group(data: Any, index: int, where: str) -> Group:
    """One JSONL record -> :class:`Group`; ``where`` names the line in errors."""
    if not isinstance(data, dict):
        raise GroupFileError(
            f"{where} should be a scored group (an object with tokens, masks, scores); got a JSON "
            f"{type(data).__name__}. Fix: pass the file written by --env.data_path_to_save_groups."
        )
    missing = [k for k in ("tokens", "masks", "scores") if not isinstance(data.get(k), list)]
    if "tokens" in missing:
        keys = ", ".join(sorted(map(str, data))[:8]) or "none"
        hint = (
            " This looks like evaluate's samples.jsonl (--env.data_dir_to_save_evals): it holds no tokens. "
            "Fix: view a `process` run's file instead (--env.data_path_to_save_groups out/g.jsonl)."
            if "tokens" not in data and ("messages" in data or "score" in data)
            else " Fix: pass the file written by --env.data_path_to_save_groups."
        )
        raise GroupFileError(
            f"{where} should be a scored group (an object with tokens, masks, scores); it has no list "
            f"{', '.join(missing)} (its keys: {keys}).{hint}"
        )
    tokens, masks = data.get("tokens") or [], data.get("masks") or []
    scores, messages = data.get("scores") or [], data.get("messages") or []
    count = max(len(tokens), len(scores), len(messages))
    rollouts = [
        Rollout(
            group=index,
            index=i,
            score=_score(scores[i]) if i < len(scores) else None,
            messages=[m for m in (messages[i] if i < len(messages) else []) if isinstance(m, dict)],
            tokens=list(tokens[i]) if i < len(tokens) else [],
            masks=list(masks[i]) if i < len(masks) else [],
        )
        for i in range(count)
    ]
    return Group(index, rollouts)


def load_groups(path: str | Path) -> list[Group]:
    """Every group of a process-mode JSONL file (blank lines skipped)."""
    path = Path(path)
    if not path.is_file():
        raise GroupFileError(
            f"the groups file should exist; got {str(path)!r}. Fix: run the env's `process` command with "
            "--env.data_path_to_save_groups, then view that file."
        )
    groups: list[Group] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GroupFileError(
                f"{path.name} line {number} should be JSON; got {exc.msg} at column {exc.colno}. "
                "Fix: pass the JSONL file atroposlib wrote (one group per line)."
            ) from None
        groups.append(parse_group(data, len(groups), f"{path.name} line {number}"))
    if not groups:
        raise GroupFileError(
            f"{path.name} should hold at least one scored group; it is empty. Fix: check that the `process` "
            "run finished and wrote --env.data_path_to_save_groups (a failed run leaves an empty file)."
        )
    return groups
