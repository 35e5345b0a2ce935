"""HC415 — a program that does none of the task earns nothing: the reward judges what the model's program does, not
what it prints.

A reward that runs the model's program and counts "PASS" lines (or looks for "OK", "All tests passed") in the
output trusts text the program itself can print. The proof needs no knowledge of the task: around a proven answer
that IS a program (a ``.py`` file written with the env's file tool, or a ```python answer), the same rollout hands
in a program that defines nothing and only prints the strings the env's own source holds (markers its harness or
reward look for); a correct reward gives it no more than the controls.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from typing import Any

from hermes_envs.conformance._cases import Case, fmt_score, json_safe, run_case
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity
from hermes_envs.conformance._golds import fenced
from hermes_envs.conformance._observations.scoring import (
    Controls,
    GoldProbes,
    ScoredRollout,
    item_key,
    numeric,
    prompt_text,
)
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

__all__ = ["forged_program", "markers"]

#: Strings graders of program output look for, tried besides those in the env's own source.
USUAL_MARKERS = ("PASS", "PASSED", "passed", "OK", "ok", "SUCCESS", "All tests passed", "1 passed")
#: Markers that say something went wrong: printing them would only hide a forgery from a reward that also checks
#: for failures.
_NEGATIVE = re.compile(r"fail|error|exception|traceback|wrong|incorrect|mismatch|timeout|timed out|assert|"
                       r"denied|invalid|missing|\bnot\b|\bno\b", re.I)  # fmt: skip
_QUOTED = re.compile(r"['\"]([A-Za-z][\w .:!-]{1,30})['\"]")
#: How many markers, each printed this many times (a grader may count one per hidden case).
MAX_MARKERS, REPEATS = 60, 30
_PATH_PARAMS = ("path", "file_path", "filename", "file")
_CONTENT_PARAMS = ("content", "contents", "text", "data")


def markers(source: str, exclude: str) -> list[str]:
    """Strings a grader may look for in a program's output: quoted words inside the env's string constants (a
    harness's ``print('PASS')``), the usual markers, then the short one-line constants of the env's source; never
    one the prompt or the item holds (printing what the task asks for is solving it), nor one that reports a
    failure."""
    quoted: list[str] = []
    constants: list[str] = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            if 2 <= len(text) <= 40 and "\n" not in text:
                constants.append(text)
            quoted.extend(_QUOTED.findall(node.value))
    out = [
        m
        for m in dict.fromkeys([*quoted, *USUAL_MARKERS, *constants])
        if re.search(r"[A-Za-z]", m) and "{" not in m and not _NEGATIVE.search(m) and m not in exclude
    ]
    return out[:MAX_MARKERS]


def _program(printed: list[str]) -> str:
    lines = "".join(f"    print({m!r})\n" for m in printed)
    return f"# defines nothing: prints what a grader may look for\nfor _ in range({REPEATS}):\n{lines}"


def _program_call(entry: ScoredRollout[Any]) -> tuple[str, dict[str, Any], str, str] | None:
    """(tool name, its arguments, the content parameter, the final reply) of a rollout that wrote a ``.py``
    file with one file-tool call."""
    final = ""
    call: tuple[str, dict[str, Any], str] | None = None
    for message in entry.result.messages:
        if message.get("role") != "assistant":
            continue
        if message.get("content"):
            final = str(message["content"])
        for tool_call in message.get("tool_calls") or []:
            function = tool_call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                continue
            path = next((arguments[p] for p in _PATH_PARAMS if isinstance(arguments.get(p), str)), "")
            content = next((p for p in _CONTENT_PARAMS if isinstance(arguments.get(p), str)), None)
            if path.endswith(".py") and content is not None:
                call = (str(function.get("name")), arguments, content)
    return (*call, final or "Done.") if call is not None else None


def _forgery(
    entry: ScoredRollout[Any], program: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(the proven rollout's model turns, the same turns handing in ``program`` instead), or None when the proven
    answer is no program."""
    origin = entry.origin
    template = getattr(origin, "template", None)
    value = getattr(origin, "value", None)
    if getattr(origin, "source", "") == "field" and template and value is not None:
        if fenced(template) and template.split("\n", 1)[0].lower() in ("```python", "```py", "```python3"):
            return [{"content": template.format(v=value)}], [{"content": template.format(v=program)}]
        return None
    found = _program_call(entry)
    if found is None:
        return None
    name, arguments, content, final = found
    forged = {**arguments, content: program}
    return (
        [{"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}, {"content": final}],
        [{"content": "", "tool_calls": [{"name": name, "arguments": forged}]}, {"content": final}],
    )


@check(
    "HC415",
    "forged-program-output",
    "a program that only prints what the grader looks for earns nothing",
    requires=SCORE_PREREQUISITES,
    why=(
        "A reward that reads a program's printed output (counting PASS lines, looking for OK) trusts text the "
        "model's own program can print: the policy learns to print the markers instead of solving the task."
    ),
    fix=(
        "Decide pass or fail in the env: run each hidden case in a harness and compare the returned value with the "
        "expected one in compute_reward (or use the test runner's exit status and its report file), never a "
        "string the model's code could print."
    ),
)
def forged_program(s: EnvSession) -> list[Finding]:
    """Rewards that run the model's program and grade its printed output (a "PASS" per case, an "OK"): a program
    that defines nothing and prints those strings scores like a correct one."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    proven = [e for e in s.observe(GoldProbes).gold if _forgery(e, "") is not None]
    if not proven:
        raise NotApplicable(
            "no proven answer is a Python program (a .py file written with a tool, a ```python answer)"
        )
    try:
        source = inspect.getsource(s.module)
    except (OSError, TypeError):
        source = ""
    controls = s.observe(Controls)
    for entry in proven[:2]:
        exclude = prompt_text(s.env(), entry.item) + "\n" + json.dumps(entry.item, default=str)
        program = _program(markers(source, exclude))
        turns = _forgery(entry, program)
        assert turns is not None
        floor = max((score for _n, score in controls.by_item.get(item_key(entry.item), ())), default=0.0)
        case = Case(
            rule="a program that does none of the task scores no more than the controls",
            item=entry.item,
            scripts={"the proven program": turns[0], "a program that only prints": turns[1]},
            order=("the proven program", "a program that only prints"),
            holds=(
                ("the proven program", ">", floor),
                ("a program that only prints", ">", floor),
                ("a program that only prints", ">=", "the proven program"),
            ),
        )
        run = run_case(s, case)
        forged = run.scores.get("a program that only prints")
        if not run.violated or not numeric(forged):
            continue
        return [
            Finding(
                "HC415",
                f"a program that does none of the task should earn nothing; on item {short(entry.item, 90)} a "
                f"program that defines nothing and only prints strings from the env's own code ({short(program, 120)}) "
                f"scored {fmt_score(forged)}, as much as the proven answer "
                f"({fmt_score(run.scores.get('the proven program'))}; the best control scored {fmt_score(floor)}). "
                "The reward grades the program's printed output, which the model's code controls: the policy learns "
                f"to print the markers instead of solving the task. Scores: {run.describe()}.",
                "decide pass or fail in the env: compare each hidden case's returned value with the expected one in "
                "compute_reward (a harness that prints the value under a marker, parsed and compared env-side), or "
                "use the test runner's exit status together with its report; never count strings the program "
                "could print.",
                Severity.ERROR,
                subject="program that only prints",
                counterexample=case.to_json() if json_safe(case.item) else None,
            )
        ]
    return []
