"""HC3xx — prompts: ``format_prompt`` gives a real, filled-in string for every item."""

from __future__ import annotations

import re

from hermes_envs.conformance.findings import Finding, NotApplicable
from hermes_envs.conformance.registry import check
from hermes_envs.conformance.session import EnvSession

_UNFILLED = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|\{\{\s*[A-Za-z_][\w.]*\s*\}\}")


@check("HC301", "prompt-is-text", "format_prompt returns a non-empty, filled-in str for every item",
       requires=("HC201",))
def prompt_is_text(s: EnvSession) -> list[Finding]:
    """``format_prompt`` that raises on some items, returns a non-string or "", or leaves ``{field}`` unfilled."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no format_prompt (not an agent env)")
    env = s.env()
    items = s.training_items()["items"]
    findings: list[Finding] = []
    seen_kinds: set[str] = set()
    for index, item in enumerate(items):
        subject = f"training item #{index}"
        try:
            prompt = env.format_prompt(item)
        except Exception as exc:
            kind = f"raise:{type(exc).__name__}"
            if kind not in seen_kinds:
                seen_kinds.add(kind)
                findings.append(Finding("HC301", f"format_prompt(item) should return the prompt; it raised "
                                        f"{type(exc).__name__}: {exc} for {str(item)[:200]}.",
                                        "handle every item shape your data has (use item.get(...) for optional "
                                        "fields).", subject=subject))
            continue
        if not isinstance(prompt, str):
            if "type" not in seen_kinds:
                seen_kinds.add("type")
                findings.append(Finding("HC301", f"format_prompt(item) should return a str; got "
                                        f"{type(prompt).__name__} ({str(prompt)[:80]!r}).",
                                        "return the user message text (the base wraps it in a message for you).",
                                        subject=subject))
        elif not prompt.strip():
            if "empty" not in seen_kinds:
                seen_kinds.add("empty")
                findings.append(Finding("HC301", f"format_prompt(item) should return a non-empty prompt; got "
                                        f"{prompt!r} for {str(item)[:200]}.",
                                        "check the field name your prompt reads (config.prompt_field).",
                                        subject=subject))
        else:
            match = _UNFILLED.search(prompt)
            if match and "unfilled" not in seen_kinds:
                seen_kinds.add("unfilled")
                findings.append(Finding("HC301", f"format_prompt(item) should fill every template field; got "
                                        f"{match.group(0)!r} left in {prompt[:160]!r}.",
                                        "use an f-string or .format(**item) so the placeholder is replaced.",
                                        subject=subject))
    return findings
