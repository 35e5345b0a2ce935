"""Drift between two recordings of one cassette: requests, models, tokens and the replies of each conversation
turn that changed, one line per change (what a re-recording prints)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from hermes_envs._chat import assistant_turns
from hermes_envs.testing._cassette_format import Interaction, reply_of, request_value

__all__ = ["drift_summary"]


def _conversation_key(body: Any) -> tuple[str, int]:
    value = request_value(body)
    if not isinstance(value, dict):
        return ("<non-json>", 0)
    messages = value.get("messages") or []
    first_user = next(
        (m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"), ""
    )
    turn = 1 + assistant_turns(messages)
    return (str(first_user)[:60], turn)


def _describe_reply(it: Interaction) -> str:
    if it.status >= 400:
        return f"HTTP {it.status}"
    turn = reply_of(it.response)
    if turn is None:
        return "<non-chat response>"
    parts = []
    for tc in turn["tool_calls"]:
        args = tc["arguments"] if isinstance(tc["arguments"], str) else json.dumps(tc["arguments"])
        parts.append(f"{tc['name']}({args[:40]})")
    if turn.get("content"):
        text = " ".join(str(turn["content"]).split())
        parts.append(repr(text[:50] + ("…" if len(text) > 50 else "")))
    return " + ".join(parts) or "<empty>"


def _tokens(items: Iterable[Interaction]) -> int:
    total = 0
    for it in items:
        turn = reply_of(it.response)
        usage = (turn or {}).get("usage") or {}
        total += int(usage.get("total_tokens") or 0)
    return total


def drift_summary(old: list[Interaction], new: list[Interaction], limit: int = 12) -> list[str]:
    """What changed between two recordings of the same cassette, one line per change (empty: no drift)."""
    lines: list[str] = []
    if len(old) != len(new):
        lines.append(f"requests: {len(old)} -> {len(new)}")
    models_old = Counter(str((request_value(i.request) or {}).get("model")) for i in old if _is_json(i))
    models_new = Counter(str((request_value(i.request) or {}).get("model")) for i in new if _is_json(i))
    if set(models_old) != set(models_new):
        lines.append(f"model: {sorted(models_old)} -> {sorted(models_new)}")
    t_old, t_new = _tokens(old), _tokens(new)
    if t_old != t_new:
        lines.append(f"tokens: {t_old} -> {t_new}")
    by_old: dict[tuple[str, int], list[str]] = defaultdict(list)
    by_new: dict[tuple[str, int], list[str]] = defaultdict(list)
    for it in old:
        by_old[_conversation_key(it.request)].append(_describe_reply(it))
    for it in new:
        by_new[_conversation_key(it.request)].append(_describe_reply(it))
    changes = []
    for key in sorted(set(by_old) | set(by_new)):
        a, b = Counter(by_old.get(key, [])), Counter(by_new.get(key, []))
        if a == b:
            continue
        gone, came = sorted((a - b).elements()), sorted((b - a).elements())
        where = f"{key[0]!r} turn {key[1]}"
        if not a:
            changes.append(f"{where}: new request(s), replies {came}")
        elif not b:
            changes.append(f"{where}: no longer requested (was {gone})")
        else:
            changes.append(f"{where}: replies {gone} -> {came}")
    lines.extend(changes[:limit])
    if len(changes) > limit:
        lines.append(f"... and {len(changes) - limit} more changed turn(s)")
    return lines


def _is_json(it: Interaction) -> bool:
    return isinstance(request_value(it.request), dict)
