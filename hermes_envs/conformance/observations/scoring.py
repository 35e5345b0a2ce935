"""compute_reward on the session's rollouts: every probe transcript, the item-shaped negative controls, the env's
own good / bad transcripts and the gold-answer probes, each scored on strict copies of the result; cached.

The reward checks (HC4xx) and the checks built on their scores (answers, isolation, fuzz) read these.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

from hermes_envs.conformance.ctxpaths import record_paths
from hermes_envs.conformance.findings import NotApplicable
from hermes_envs.conformance.golds import gold_positives
from hermes_envs.conformance.probes import (
    CONTROLS,
    ContractViolation,
    StrictAgentResult,
    env_transcripts,
    play,
)
from hermes_envs.conformance.session import EnvSession
from hermes_envs.conformance.sites import RaisedInAuthorCode


def _score(
    s: EnvSession, item: Any, result: Any, task_id: str, phase: str = "rewards", trace: bool = False
) -> dict[str, Any]:
    """Call compute_reward on strict copies of ``result`` (twice, for HC404) in the rollout's sandbox.

    Returns ``{"score", "score2", "error", "exc", "violations", "mutated", "accesses"}``; the sandbox is cleaned up
    afterwards. File accesses of the reward are recorded for HC602, the item and messages compared for HC405.
    """
    import copy

    from hermes_envs.conformance.fileaudit import FileAudit, sandbox_of
    from hermes_envs.tools import ToolContext, cleanup_sandbox

    env = s.env()
    entry: dict[str, Any] = {
        "score": None,
        "score2": None,
        "error": None,
        "exc": None,
        "violations": [],
        "soft_violations": [],
        "mutated": [],
        "accesses": [],
        "model_requests": 0,
        "swallowed": [],  # (exception, "file:line: code") of bug-type raises the reward caught itself
        "ctx_paths": [],  # (ToolContext method, absolute path) the reward handed its ToolContext (HC604)
        "task_id": task_id,
    }
    item_before = copy.deepcopy(item)
    audit = FileAudit()
    ctx = ToolContext(task_id)
    record_paths(ctx, entry["ctx_paths"])
    sandbox, root = sandbox_of(task_id)
    try:
        for key in ("score", "score2"):
            strict = StrictAgentResult.of(result)
            requests_before = len(s.server.calls)
            tracer = RaisedInAuthorCode() if trace and key == "score" else contextlib.nullcontext()
            try:
                with audit.watching("compute_reward"), tracer:
                    entry[key] = s.run_env(
                        lambda _env, strict=strict: env.compute_reward(item, strict, ctx), phase=phase
                    )
            except Exception as exc:
                entry["exc"] = exc
                entry["error"] = f"{type(exc).__name__}: {exc}"
            if isinstance(tracer, RaisedInAuthorCode):
                entry["traced"] = True
                entry["swallowed"] = [
                    (e, where)
                    for e, where in tracer.swallowed(entry["exc"])
                    if not isinstance(e, ContractViolation)
                ]
            if key == "score":  # model requests the reward itself made (a judge)
                entry["model_requests"] = sum(
                    1 for c in s.server.calls[requests_before:] if c.route.endswith("completions")
                )
            entry["violations"].extend(v for v in strict.violations if v not in entry["violations"])
            entry["soft_violations"].extend(
                v for v in strict.soft_violations if v not in entry["soft_violations"]
            )
            if key == "score" and strict.messages != result.messages:
                entry["mutated"].append(("result.messages", _diff_messages(result.messages, strict.messages)))
            if entry["exc"] is not None:
                break
        if item != item_before:
            entry["mutated"].append(("item", f"{_short(item_before)} became {_short(item)}"))
    finally:
        if sandbox is None:
            sandbox, root = sandbox_of(task_id)
        ctx.cleanup()
        cleanup_sandbox(task_id)
    entry["accesses"] = [(a, sandbox, root) for a in audit.accesses]
    return entry


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _diff_messages(before: list[Any], after: list[Any]) -> str:
    if len(before) != len(after):
        return f"{len(before)} messages became {len(after)}"
    for i, (a, b) in enumerate(zip(before, after)):
        if a != b:
            return f"message {i} {_short(a, 100)} became {_short(b, 100)}"
    return "changed"


def scored_probes(s: EnvSession) -> list[dict[str, Any]]:
    """Call compute_reward on a strict copy of every probe transcript; cached.

    Each entry adds ``score``, ``score2`` (a second call on the same input), ``error`` (str), ``exc``,
    ``violations`` (misuses seen by the strict result), ``mutated`` and ``accesses`` (see :func:`_score`).
    """
    if "scored" in s.facts:
        return s.facts["scored"]
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    out = []
    for probe in s.probe_transcripts():
        # Traced for exceptions the reward swallows (HC402); not the 200 KB answer, whose cost the tracer would
        # multiply into a stall HC408 blames on the env.
        traced = probe["probe"] != "huge_output"
        out.append(dict(probe, **_score(s, probe["item"], probe["result"], probe["task_id"], trace=traced)))
    s.facts["scored"] = out
    return out


def _key(item: Any) -> str:
    return repr(item)


def control_scores(s: EnvSession) -> dict[str, list[tuple[str, float]]]:
    """Per item (repr): the (name, score) of every negative control that scored (probes and the env's bad ones)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for entry in scored_probes(s):
        if entry["probe"] in CONTROLS and _numeric(entry["score"]):
            out.setdefault(_key(entry["item"]), []).append((entry["probe"], float(entry["score"])))
    for entry in positive_scores(s)["env_bad"] + item_controls(s):
        if _numeric(entry["score"]):
            out.setdefault(_key(entry["item"]), []).append((entry["name"], float(entry["score"])))
    return out


#: Negative controls shaped like the item's structured answer: the empty answer of the task's shape. A reward
#: that counts missing fields as right (``got.get(k, v) == v``) or only penalises wrong entries gives them credit.
EMPTY_STRUCTURED = {"dict": ("{}", "```json\n{}\n```"), "list": ("[]", "Answer: []")}


def item_controls(s: EnvSession) -> list[dict[str, Any]]:
    """Score the item-shaped negative controls (the empty JSON object / list of a structured gold); cached."""
    if "item_controls" in s.facts:
        return s.facts["item_controls"]
    from hermes_envs.conformance.golds import _structured_fields
    from hermes_envs.conformance.probes import say

    out: list[dict[str, Any]] = []
    s.facts["item_controls"] = out
    for item in s.probe_items():
        kinds = {kind for _name, kind, _value in _structured_fields(item)}
        for kind in sorted(kinds):
            for text in EMPTY_STRUCTURED[kind]:
                name = f"empty {'object' if kind == 'dict' else 'list'} {text!r}"
                result, task_id = s.run_probe(item, say(text), 3, "empty-structured", "gold")
                out.append(
                    dict(
                        _score(s, item, result, task_id, "gold"),
                        item=item,
                        name=name,
                        probe=name,
                        about=f"the task's answer shape with nothing in it ({text!r})",
                        source="control",
                        result=result,
                    )
                )
    return out


def best_control(s: EnvSession, controls: dict[str, list[tuple[str, float]]], item: Any) -> tuple[str, float]:
    """The highest-scoring control of ``item`` among those under the ceiling (the others are HC406's findings):
    a correct answer must beat it."""
    scored = controls.get(_key(item), [])
    under = [c for c in scored if c[1] <= s.settings.control_ceiling]
    if under:
        return max(under, key=lambda c: c[1])
    return min(scored, key=lambda c: c[1], default=("none", 0.0))


def _numeric(score: Any) -> bool:
    return isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)


def positive_scores(s: EnvSession) -> dict[str, Any]:
    """Score the env's own transcripts and the gold-answer probes of each probe item; cached.

    Gold probes for an item stop at the first one that scores above that item's best control. Returns
    ``{"env_good": [...], "env_bad": [...], "gold": [...], "tried": {item: [names]}, "error": str|None}``; each
    entry ``{"item", "name", "source", "field", "value", "score", ...}``.
    """
    if "positives" in s.facts:
        return s.facts["positives"]
    env = s.env()
    schemas, _names = s.tools()
    found: dict[str, Any] = {
        "env_good": [],
        "env_bad": [],
        "gold": [],
        "all_gold": [],  # every gold probe scored, proven or not (HC404 re-scores them in other processes)
        "tried": {},
        "error": None,
    }
    s.facts["positives"] = found  # control_scores() reads env_bad while we fill it
    probes = scored_probes(s)
    for item in s.probe_items():
        try:
            own = env_transcripts(env, item)
        except Exception as exc:
            found["error"] = f"conformance_transcripts(item) raised {type(exc).__name__}: {exc}"
            own = {}
        for kind in ("bad", "good"):
            for index, script in enumerate(own.get(kind, [])):
                name = f"the env's {kind} transcript #{index}"
                result, task_id = s.run_probe(
                    item, play(script), max(len(script) + 1, 2), f"env-{kind}", "gold"
                )
                entry = dict(
                    _score(s, item, result, task_id, "gold"),
                    item=item,
                    name=name,
                    source="env",
                    field=None,
                    value=None,
                    result=result,
                )
                found[f"env_{kind}"].append(entry)
    controls = control_scores(s)
    for item in s.probe_items():
        ceiling = best_control(s, controls, item)[1]
        tried = found["tried"].setdefault(_key(item), [])
        if any(
            e["item"] == item and _numeric(e["score"]) and e["score"] > ceiling for e in found["env_good"]
        ):
            continue  # the env proved it itself
        for positive in gold_positives(item, schemas):
            result, task_id = s.run_probe(item, positive.responder, 3, "gold", "gold")
            entry = dict(
                _score(s, item, result, task_id, "gold"),
                item=item,
                name=positive.name,
                source=positive.source,
                field=positive.field,
                value=positive.value,
                template=positive.template,
                kind=positive.kind,
                result=result,
            )
            tried.append(positive.name)
            found["all_gold"].append(entry)
            if _numeric(entry["score"]) and entry["score"] > ceiling:
                found["gold"].append(entry)
                break
    del probes
    return found
