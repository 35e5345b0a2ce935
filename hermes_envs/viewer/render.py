"""Render scored groups as one self-contained HTML page: turns, tool calls and results, reasoning, the reward of each
rollout, trained vs masked tokens, and the findings linked to their rollouts.

Jinja2 with autoescaping renders every piece of text from the file (model output can hold any markup), and the page
loads nothing: styles are inline and there is no script.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from hermes_envs.viewer.findings import ViewFinding, find_problems
from hermes_envs.viewer.groups import MASKED, Group, Rollout, load_groups
from hermes_envs.viewer.template import PAGE

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.S)


@dataclass
class TokenSpan:
    """A run of consecutive tokens that are all trained or all masked, decoded to text."""

    trained: bool
    text: str
    count: int


class TokenDecoder:
    """Decodes token ids with a ``tokenizer.json`` (the ``tokenizers`` library: fast, no transformers import)."""

    def __init__(self, folder: str | Path | None) -> None:
        self._tokenizer: Any = None
        if folder is not None:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))

    def decode(self, ids: list[int]) -> str:
        if self._tokenizer is None:
            return " ".join(str(i) for i in ids) + " "
        return self._tokenizer.decode(ids, skip_special_tokens=False)


def token_spans(rollout: Rollout, decoder: TokenDecoder) -> list[TokenSpan]:
    """The rollout's tokens cut where the mask changes between trained and masked."""
    spans: list[TokenSpan] = []
    start = 0
    pairs = list(zip(rollout.tokens, rollout.masks))
    for i in range(1, len(pairs) + 1):
        if i == len(pairs) or (pairs[i][1] != MASKED) != (pairs[start][1] != MASKED):
            ids = [t for t, _ in pairs[start:i]]
            spans.append(TokenSpan(pairs[start][1] != MASKED, decoder.decode(ids), len(ids)))
            start = i
    return spans


def _pretty_json(text: Any) -> str:
    """Arguments or a tool result as indented JSON when they parse, else as given."""
    if not isinstance(text, str):
        return json.dumps(text, indent=2, ensure_ascii=False)
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def _call_arguments(raw: Any) -> tuple[str, list[dict[str, str]]]:
    """A call's arguments as indented JSON, with each multi-line string value (``write_file``'s content, a
    script) taken out and shown as its own block: JSON would show it as one line of ``\\n`` escapes."""
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return str(raw), []
    if not isinstance(parsed, dict):
        return _pretty_json(raw), []
    blocks = [{"name": k, "text": v} for k, v in parsed.items() if isinstance(v, str) and "\n" in v]
    shown = {k: ("(below)" if any(b["name"] == k for b in blocks) else v) for k, v in parsed.items()}
    return json.dumps(shown, indent=2, ensure_ascii=False), blocks


def _text(content: Any) -> str:
    """A message's content as text (multi-part contents joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def view_message(message: dict[str, Any]) -> dict[str, Any]:
    """What the template shows of one chat message: role, text, reasoning, tool calls, tool result."""
    content = _text(message.get("content"))
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    thinking = _THINK.findall(content)
    if thinking:
        reasoning = "\n".join(filter(None, [_text(reasoning), *thinking]))
        content = _THINK.sub("", content).strip()
    calls = []
    for call in message.get("tool_calls") or []:
        arguments, blocks = _call_arguments((call.get("function") or {}).get("arguments", ""))
        calls.append(
            {
                "id": call.get("id", ""),
                "name": (call.get("function") or {}).get("name", "?"),
                "arguments": arguments,
                "blocks": blocks,
            }
        )
    result = None
    if message.get("role") == "tool":
        try:
            parsed = json.loads(content)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            result = {
                "output": _text(parsed.get("output")),
                "exit_code": parsed.get("exit_code"),
                "error": parsed.get("error"),
            }
        else:
            result = {"output": _pretty_json(content), "exit_code": None, "error": None}
    return {
        "role": str(message.get("role", "?")),
        "content": content,
        "reasoning": _text(reasoning),
        "tool_calls": calls,
        "tool_call_id": message.get("tool_call_id", ""),
        "result": result,
    }


def _score_colour(score: float | None) -> str:
    """Red (0) to green (1) for the reward badge; grey for a missing or non-finite score."""
    if score is None or not math.isfinite(score):
        return "hsl(0, 0%, 55%)"
    return f"hsl({round(120 * min(1.0, max(0.0, score)))}, 65%, 38%)"


def render_html(groups: list[Group], *, title: str, tokenizer: str | Path | None) -> str:
    """The page for ``groups`` (``tokenizer``: a folder with tokenizer.json to decode tokens; None shows ids)."""
    decoder = TokenDecoder(tokenizer)
    findings = find_problems(groups)
    by_anchor: dict[str, list[ViewFinding]] = {}
    for finding in findings:
        by_anchor.setdefault(finding.anchor, []).append(finding)
    rollouts = [r for g in groups for r in g.rollouts]
    scores = [r.score for r in rollouts if r.score is not None and math.isfinite(r.score)]
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(PAGE).render(
        title=title,
        groups=[
            {
                "index": g.index,
                "anchor": f"g{g.index}",
                "scores": ", ".join("–" if s is None else f"{s:g}" for s in g.scores),
                "findings": by_anchor.get(f"g{g.index}", []),
                "rollouts": [
                    {
                        "anchor": r.anchor,
                        "index": r.index,
                        "score": "no score" if r.score is None else f"{r.score:g}",
                        "colour": _score_colour(r.score),
                        "tokens": len(r.tokens),
                        "trained": r.trained,
                        "spans": token_spans(r, decoder),
                        "messages": [view_message(m) for m in r.messages],
                        "findings": by_anchor.get(r.anchor, []),
                    }
                    for r in g.rollouts
                ],
            }
            for g in groups
        ],
        findings=findings,
        summary={
            "groups": len(groups),
            "rollouts": len(rollouts),
            "mean": f"{sum(scores) / len(scores):.3f}" if scores else "–",
            "tokens": sum(len(r.tokens) for r in rollouts),
            "trained": sum(r.trained for r in rollouts),
        },
    )


def default_output(jsonl: str | Path) -> Path:
    """``out/g.jsonl`` -> ``out/g.view.html`` (atroposlib writes its own ``out/g.html`` beside it)."""
    path = Path(jsonl)
    return path.with_name(path.stem + ".view.html")


def write_view(
    jsonl: str | Path, out: str | Path | None = None, *, tokenizer: str | Path | None = "offline"
) -> Path:
    """Render the groups file ``jsonl`` to ``out`` (default :func:`default_output`) and return the page's path.

    ``tokenizer``: ``"offline"`` (the shipped tokenizer, what the offline runs use), a folder, or None (token ids).
    """
    if tokenizer == "offline":
        from hermes_envs.testing.offline import offline_tokenizer_path

        tokenizer = offline_tokenizer_path()
    groups = load_groups(jsonl)
    target = Path(out) if out else default_output(jsonl)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(groups, title=Path(jsonl).name, tokenizer=tokenizer), encoding="utf-8")
    return target
