"""HC410-HC411 — what the reward grades: a correct answer in any usual rendering, and only the model's own answer.

Both start from a gold the kit has proven (a gold-answer probe that beat the controls, see HC407): HC410 writes
the same gold in the other renderings a model uses (5000 for 5000.0, 1,234 for 1234, PARIS / paris for Paris, **42**)
in the same answer shape; HC411 puts the proven answer in a tool result and never says it (the rollout runs out
of turns on a tool call), which a reward reading ``messages[-1]`` grades as the model's answer.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._cases import Case, case_json
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._golds import fenced
from hermes_envs.conformance._observations.origin import CheckOrigin, GoldOrigin
from hermes_envs.conformance._observations.rollouts import run_probe
from hermes_envs.conformance._observations.scoring import (
    Controls,
    GoldProbes,
    ScoredRollout,
    numeric,
    score_rollout,
)
from hermes_envs.conformance._probes import say
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d+$")
_FRACTION = re.compile(r"^(-?\d+)/(\d+)$")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z' -]{2,}$")


_YEAR_FIELD = re.compile(r"(^|_)(year|yr)s?($|_)|date", re.I)


def renderings(value: str, field: str = "") -> list[tuple[str, str, bool]]:
    """``(what, text, strict)`` for the other usual renderings of the gold ``value`` (of item field ``field``).

    ``strict`` renderings are the same value by any reading (5000 for 5000.0, a thousands separator, case of a word):
    scoring them as wrong is an error. The others (a fraction as a decimal, bold markup around the value, which an
    answer format fixed by the prompt may rightly refuse) are a warning."""
    out: list[tuple[str, str, bool]] = []
    if _INT.match(value):
        # An integer gold written "42.0" is left out: models rarely write counts that way, and a reward taking
        # the last run of digits is right to read it as 0. Thousands separators they do write, but never in a
        # year ("1,989"): none for a field named like a year, and only a warning for a number that could be one.
        number: float = int(value)
        if abs(number) >= 1000 and not _YEAR_FIELD.search(field):
            out.append(("with thousands separators", f"{number:,}", not 1000 <= number <= 2100))
    elif _FLOAT.match(value):
        number = float(value)
        if number.is_integer():
            out.append(("as an integer", str(int(number)), True))
            if abs(number) >= 1000:
                out.append(("with thousands separators", f"{int(number):,}", True))
        else:
            out.append(("with a trailing zero", f"{value}0", True))
    elif _FRACTION.match(value):
        numerator, denominator = (int(x) for x in _FRACTION.match(value).groups())  # type: ignore[union-attr]
        if denominator and len(f"{numerator / denominator}") <= 8:
            out.append(("as a decimal", f"{numerator / denominator:g}", False))
    elif _WORDS.match(value) and not value.isupper():
        for what, text in (("in lower case", value.lower()), ("in upper case", value.upper())):
            if text != value:
                out.append((what, text, True))
    # Markup is not the value: whether "**42**" must score like "42" depends on the answer format the env's prompt
    # fixes ("Answer: <number>"), which is the kit's guess, so a markup rendering scored lower is a warning.
    out.append(("in bold markup", f"**{value}**", False))
    return out


@dataclass(frozen=True)
class Rendered:
    """A proven gold answered another way (``answer``, the gold's value written ``what``), and its score."""

    scored: ScoredRollout[CheckOrigin]
    gold: ScoredRollout[GoldOrigin]
    answer: str
    what: str = ""
    strict: bool = True


def rendering_scores(s: EnvSession) -> list[Rendered]:
    """Score every other rendering of each proven scalar gold, in the answer shape that proved it."""
    out: list[Rendered] = []
    for gold in s.observe(GoldProbes).gold:
        origin = gold.origin
        if origin.source != "field" or origin.kind != "scalar" or not origin.template or origin.value is None:
            continue
        for what, text, strict in renderings(origin.value, str(origin.field or "")):
            if fenced(origin.template) and text.startswith("**"):
                continue  # inside a code fence, "**" is code, not markup around the answer
            answer = origin.template.format(v=text)
            result, task_id = run_probe(s, gold.item, say(answer), 3, "rendering", "gold")
            scored = score_rollout(
                s, gold.item, result, task_id, CheckOrigin(f"{origin.field!r} written {what}"), "gold"
            )
            out.append(Rendered(scored, gold, answer, what, strict))
    return out


@check(
    "HC410",
    "answer-renderings",
    "a correct answer scores the same in its other usual renderings",
    requires=SCORE_PREREQUISITES,
    why=(
        "Models write a correct answer many ways (1,234 / 5000 vs 5000.0 / paris / **42**); a reward that "
        "scores only one spelling trains formatting, not the task, and punishes correct rollouts."
    ),
    fix="Normalise before comparing: strip markup, numbers as numbers with a tolerance, words case-insensitively.",
)
def answer_renderings(s: EnvSession) -> list[Finding]:
    """A reward that credits "Answer: 42" but not "Answer: 5000" for 5000.0, "1,234", "paris" for Paris, or "**42**": the
    model is punished for a correct answer written another way, and learns formatting, not the task."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    if not any(g.origin.kind == "scalar" and g.origin.template for g in s.observe(GoldProbes).gold):
        raise NotApplicable("no scalar gold answer was proven for the probe items (see HC407)")
    controls = s.observe(Controls)
    found = s.observe(GoldProbes)
    findings = []
    seen: set[str] = set()
    for rendered in rendering_scores(s):
        entry, gold = rendered.scored, rendered.gold
        if not numeric(entry.score) or not numeric(gold.score) or entry.score >= gold.score - 1e-9:
            continue
        if rendered.what in seen:
            continue
        seen.add(rendered.what)
        as_control = entry.score <= controls.best(entry.item, s.settings.control_ceiling)[1]
        # An error needs the env to confirm the gold (another value in the same shape scores lower) and a
        # rendering that is the same value by any reading; letter case is the kit's guess (a case-sensitive task
        # exists), so it stays a warning.
        confirmed = found.confirmed(gold) and not (entry.model_requests or gold.model_requests)
        severity = (
            Severity.ERROR
            if rendered.strict and as_control and confirmed and "case" not in rendered.what
            else Severity.WARNING
        )
        canonical = gold.origin.answer
        findings.append(
            Finding(
                "HC410",
                f"a correct answer should score the same however it is written; field {gold.origin.field!r} answered "
                f"as {canonical!r} scored {gold.score:g}, but written {rendered.what} ({rendered.answer!r}) it "
                f"scored {entry.score:g} on item {short(entry.item, 100)}.",
                "normalise before comparing: strip markup (`re.sub(r'[*_`]', '', text)`), compare numbers as "
                "numbers (`float(x.replace(',', ''))` with a tolerance), and words case-insensitively "
                "(`.strip().lower()`).",
                severity,
                subject=f"rendering {rendered.what}",
                counterexample=case_json(
                    Case(
                        rule="a correct answer scores the same in another rendering of the same value",
                        item=entry.item,
                        scripts={
                            "answer": [{"content": canonical}],
                            "rendering": [{"content": rendered.answer}],
                        },
                        order=("answer", "rendering"),
                        holds=(("rendering", "<", "answer"),),
                    )
                ),
            )
        )
    return findings


def _terminal_tool(s: EnvSession) -> tuple[str, str] | None:
    """(tool name, command parameter) of a tool that runs a shell command, if the env offers one."""
    schemas, _names = s.tools()
    for tool in schemas:
        function = tool.get("function", tool)
        props = (function.get("parameters") or {}).get("properties") or {}
        for param in ("command", "cmd"):
            if param in props:
                return function.get("name", ""), param
    return None


def tool_output_scores(s: EnvSession) -> list[Rendered]:
    """For each proven gold: a rollout that only ever echoes the answer with the terminal and runs out of turns
    (the transcript ends on the tool result holding the answer; the model never says it)."""
    out: list[Rendered] = []
    terminal = _terminal_tool(s)
    if terminal is None:
        return out
    name, param = terminal
    for gold in s.observe(GoldProbes).gold:
        if gold.origin.source != "field" or not gold.origin.template:
            continue
        answer = gold.origin.answer
        call = {"name": name, "arguments": {param: f"echo {shlex.quote(answer)}"}}

        def respond(body: dict[str, Any], call: dict[str, Any] = call) -> dict[str, Any]:
            return {"content": "", "tool_calls": [call]}

        result, task_id = run_probe(s, gold.item, respond, 2, "tool-output", "gold")
        last = result.messages[-1] if result.messages else {}
        if last.get("role") != "tool" or answer not in str(last.get("content")):
            continue  # the loop did not end on a tool result holding the answer: nothing to learn here
        # The same rollout with a tool that returns plain text (custom tools do; the terminal wraps its output
        # in JSON, whose trailing "exit_code": 0 hides the number from a "last number" parser).
        plain = copy.deepcopy(result)
        plain.messages[-1]["content"] = answer
        for transcript in (result, plain):
            origin = CheckOrigin(f"{gold.origin.name}, the answer in a tool's output")
            out.append(
                Rendered(score_rollout(s, gold.item, transcript, task_id, origin, "gold"), gold, answer)
            )
    return out


@check(
    "HC411",
    "grades-model-answer",
    "the reward grades the model's answer, not a tool's output",
    requires=SCORE_PREREQUISITES,
    why=(
        "When the agent runs out of turns the last message is a tool result; grading messages[-1] credits a "
        "tool's output (an echo of the answer) as the model's answer, so the policy learns to echo."
    ),
    fix="Grade the last assistant message with content (hermes_envs.final_response(result)).",
)
def grades_model_answer(s: EnvSession) -> list[Finding]:
    """A reward that reads ``result.messages[-1]`` (or any message) instead of the last assistant message: when the
    agent runs out of turns the last message is a tool result, so a tool's output (an ``echo`` of the answer, a
    file's content) is graded as the model's answer."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    if _terminal_tool(s) is None:
        raise NotApplicable("the env offers no terminal-like tool to put an answer in a tool result")
    if not s.observe(GoldProbes).gold:
        raise Skip("no gold answer was proven for the probe items (see HC407)")
    ceiling = s.settings.control_ceiling
    for rendered in tool_output_scores(s):
        entry = rendered.scored
        if numeric(entry.score) and entry.score > ceiling:
            # An error only when the env confirmed the gold (the same shape with another value scores lower): else
            # "the answer" in the tool result is the kit's guess, and the credit may be for something else.
            confirmed = s.observe(GoldProbes).confirmed(rendered.gold) and not entry.model_requests
            return [
                Finding(
                    "HC411",
                    f"the reward should grade the model's own answer; a rollout in which the model only ran "
                    f"`echo {rendered.answer!r}` and never answered (it ran out of turns, so the last message is "
                    f"that tool result) scored {entry.score:g} on item {short(entry.item, 100)}.",
                    "take the answer from the last assistant message with content (`from hermes_envs import "
                    "final_response`; `next(m['content'] for m in reversed(result.messages) if m['role'] == "
                    "'assistant' and m.get('content'))`), not result.messages[-1].",
                    Severity.ERROR if confirmed else Severity.WARNING,
                    subject="probe tool-output",
                    counterexample=case_json(
                        Case(
                            rule="a tool's output is not the model's answer",
                            item=entry.item,
                            scripts={
                                "answer only in a tool result": [dict(m) for m in entry.result.messages]
                            },
                            order=("answer only in a tool result",),
                            holds=(("answer only in a tool result", ">", ceiling),),
                        )
                    ),
                )
            ]
    return []
