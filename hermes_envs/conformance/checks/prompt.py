"""HC3xx — prompts: ``format_prompt`` gives a real, filled-in string for every item."""

from __future__ import annotations

import inspect
import json
import re

from hermes_envs.conformance._findings import Finding, NotApplicable, Severity
from hermes_envs.conformance._observations.training import TrainingScan
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.env._prompt import format_prompt_of

_UNFILLED = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|\{\{\s*[A-Za-z_][\w.]*\s*\}\}")


@check(
    "HC301",
    "prompt-is-text",
    "format_prompt returns a non-empty, filled-in str for every item",
    requires=("HC201",),
    why="A prompt that is empty, not a str or still holds `{field}` trains the model on a broken task.",
    fix="Build the prompt with an f-string from fields every item has.",
)
def prompt_is_text(s: EnvSession) -> list[Finding]:
    """``format_prompt`` that raises on some items, returns a non-string or "", or leaves ``{field}`` unfilled."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no format_prompt (not an agent env)")
    env = s.env()
    items = s.observe(TrainingScan).items
    findings: list[Finding] = []
    seen_kinds: set[str] = set()
    for index, item in enumerate(items):
        subject = f"training item #{index}"
        try:
            prompt = format_prompt_of(env, item)
        except Exception as exc:
            kind = f"raise:{type(exc).__name__}"
            if kind not in seen_kinds:
                seen_kinds.add(kind)
                findings.append(
                    Finding(
                        "HC301",
                        f"format_prompt(item) should return the prompt; it raised "
                        f"{type(exc).__name__}: {exc} for {str(item)[:200]}.",
                        "handle every item shape your data has (use item.get(...) for optional fields).",
                        subject=subject,
                    )
                )
            continue
        if inspect.iscoroutine(prompt):
            name = prompt.__qualname__
            prompt.close()  # nobody will await it: close it so Python does not warn
            if "coroutine" not in seen_kinds:
                seen_kinds.add("coroutine")
                findings.append(
                    Finding(
                        "HC301",
                        f"format_prompt(item) should return a str; got a coroutine of {name}() (an async helper "
                        "called without await), so every rollout's prompt is a coroutine object.",
                        "build the prompt synchronously: make the helper a plain `def`, and do any async work "
                        "(loading, fetching) in setup() or get_next_item().",
                        subject=subject,
                    )
                )
        elif not isinstance(prompt, str):
            if "type" not in seen_kinds:
                seen_kinds.add("type")
                findings.append(
                    Finding(
                        "HC301",
                        f"format_prompt(item) should return a str; got "
                        f"{type(prompt).__name__} ({str(prompt)[:80]!r}).",
                        "return the user message text (the base wraps it in a message for you).",
                        subject=subject,
                    )
                )
        elif not prompt.strip():
            if "empty" not in seen_kinds:
                seen_kinds.add("empty")
                findings.append(
                    Finding(
                        "HC301",
                        f"format_prompt(item) should return a non-empty prompt; got "
                        f"{prompt!r} for {str(item)[:200]}.",
                        "check the field name your prompt reads (config.prompt_field).",
                        subject=subject,
                    )
                )
        else:
            match = _UNFILLED.search(prompt)
            if match and "unfilled" not in seen_kinds:
                seen_kinds.add("unfilled")
                findings.append(
                    Finding(
                        "HC301",
                        f"format_prompt(item) should fill every template field; got "
                        f"{match.group(0)!r} left in {prompt[:160]!r}.",
                        "use an f-string or .format(**item) so the placeholder is replaced.",
                        subject=subject,
                    )
                )
    return findings


def _contains(text: str, value: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(value) + r"(?![\w])", text) is not None


@check(
    "HC302",
    "answer-not-in-prompt",
    "the gold answer does not appear verbatim in the prompt",
    severity=Severity.WARNING,
    requires=("HC401", "HC402", "HC403"),
    why="A prompt that holds its own answer teaches copying; the reward is hackable by echoing.",
    fix="Leave answer fields out of the prompt (never f'{item}').",
)
def answer_not_in_prompt(s: EnvSession) -> list[Finding]:
    """Prompts that carry their own answer (the item dumped with str(item), a leaked hint): the model learns to
    copy, not to solve."""
    from hermes_envs.conformance._observations.scoring import GoldProbes

    if not s.is_hermes_env():
        raise NotApplicable("the env has no format_prompt (not an agent env)")
    # A field answer, or a file the env's reward read that held a field (its value written to the named file).
    gold = [e for e in s.observe(GoldProbes).gold if e.origin.field and e.origin.source in ("field", "tool")]
    if not gold:
        raise NotApplicable("no item field was shown to be the answer (see HC407)")
    field = gold[0].origin.field
    env = s.env()
    pairs = []
    for item in s.observe(TrainingScan).items[:50]:
        if isinstance(item, dict) and field in item:
            value = item[field]
            try:
                text = json.dumps(value) if isinstance(value, (dict, list)) else str(value).strip()
                pairs.append((text, format_prompt_of(env, item)))
            except Exception:
                continue
    if len(pairs) < 2:
        return []
    leaked = [i for i, (value, prompt) in enumerate(pairs) if value and _contains(prompt, value)]
    # The same value in OTHER items' prompts means it is generic ("yes or no", "A) ... B)"), not a leak.
    others = [
        (a, b) for a in range(len(pairs)) for b in range(len(pairs)) if a != b and pairs[a][0] != pairs[b][0]
    ][:400]
    base = sum(1 for a, b in others if _contains(pairs[b][1], pairs[a][0])) / max(1, len(others))
    rate = len(leaked) / len(pairs)
    if rate >= 0.5 and rate - base >= 0.4:
        value, prompt = pairs[leaked[0]]
        return [
            Finding(
                "HC302",
                f"the prompt should not contain the answer; the value of {field!r} (the field the reward accepts) "
                f"appears verbatim in {len(leaked)} of {len(pairs)} prompts, e.g. {value!r} in {prompt[:160]!r}.",
                "build the prompt from the question fields only (not f'{item}' or the whole record); if the answer "
                "must be in the prompt by design, silence HC302 for this env.",
                Severity.WARNING,
                subject=f"field {field}",
            )
        ]
    return []
