"""HC4xx — rewards: ``compute_reward`` reads AgentResult as an object, never raises, returns a float in [0, 1]."""

from __future__ import annotations

import contextlib
import math
import traceback
from typing import Any

from hermes_envs.conformance.ctxpaths import record_paths
from hermes_envs.conformance.findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance.golds import derivable, gold_positives
from hermes_envs.conformance.probes import (
    CONTROLS,
    PROBES,
    ContractViolation,
    StrictAgentResult,
    env_transcripts,
    play,
)
from hermes_envs.conformance.registry import check
from hermes_envs.conformance.session import EnvSession
from hermes_envs.conformance.sites import RaisedInAuthorCode


def _reward_site(exc: BaseException) -> str:
    """``file:line: code`` of the deepest frame outside hermes-envs and site-packages (the author's line)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if "site-packages" in frame.filename or "/hermes_envs/" in frame.filename:
            continue
        return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}: {(frame.line or '').strip()}"
    return ""


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


@check("HC401", "result-is-object", "compute_reward uses AgentResult as an object", requires=("HC201",))
def result_is_object(s: EnvSession) -> list[Finding]:
    """Rewards that index AgentResult like a dict, read final_response/tool_calls/tools_used (it has none), or read
    the message / tool-call dicts as objects; a getattr/hasattr fallback on such a name is a warning."""
    findings = []
    seen: set[str] = set()
    for entry in scored_probes(s):
        problems = list(entry["violations"])
        if isinstance(entry["exc"], ContractViolation) and str(entry["exc"]) not in problems:
            problems.append(str(entry["exc"]))
        if isinstance(entry["exc"], (TypeError, AttributeError)) and "subscriptable" in str(entry["exc"]):
            problems.append(f"{entry['error']} — AgentResult is a dataclass, not a dict.")
        for problem in problems:
            if problem in seen:
                continue
            seen.add(problem)
            site = _reward_site(entry["exc"]) if entry["exc"] is not None else ""
            swallowed = (
                ""
                if entry["exc"] is not None
                else " (your reward caught the error and carried on with a fallback score, so the bug stays "
                "silent during training)"
            )
            findings.append(
                Finding(
                    "HC401",
                    f"compute_reward should read AgentResult's attributes; {problem}{swallowed}"
                    + (f" At {site}." if site else ""),
                    "use result.messages / result.turns_used / result.finished_naturally / result.tool_errors; "
                    "`from hermes_envs import final_response` gives the final answer.",
                    subject=f"probe {entry['probe']}",
                )
            )
    for entry in scored_probes(s):
        for problem in entry.get("soft_violations", ()):
            if problem in seen:
                continue
            seen.add(problem)
            findings.append(
                Finding(
                    "HC401",
                    f"compute_reward should read what AgentResult has; {problem} (the reward never sees the "
                    "real answer, and no error says so)",
                    "use result.messages / result.turns_used / result.finished_naturally / result.tool_errors, "
                    "and tc['function']['name'] / m['content'] on the message dicts; `from hermes_envs import "
                    "final_response` gives the final answer. If the fallback is deliberate, ignore HC401.",
                    Severity.WARNING,
                    subject=f"probe {entry['probe']}",
                )
            )
    return findings


@check(
    "HC402",
    "reward-never-raises",
    "compute_reward never raises on transcripts the loop can produce",
    requires=("HC201",),
)
def reward_never_raises(s: EnvSession) -> list[Finding]:
    """Rewards that crash on an empty reply, tool errors, max-turns truncation, unicode or a huge output."""
    findings = []
    seen: set[str] = set()
    hc401_reports = not s.is_ignored("HC401")
    for entry in scored_probes(s):
        exc = entry["exc"]
        if exc is None or (isinstance(exc, ContractViolation) and hc401_reports):
            continue  # contract misuse is HC401's finding (unless HC401 is ignored: a raise is still a raise)
        key = f"{type(exc).__name__}:{_reward_site(exc)}"
        if key in seen:
            continue
        seen.add(key)
        about = entry.get("about") or PROBES[entry["probe"]][2]
        hint = ""
        if isinstance(exc, AttributeError) and "'dict' object has no attribute" in str(exc):
            hint = (
                " Tool calls in result.messages are dicts: use tc['function']['name'], not tc.function.name."
            )
        site = _reward_site(exc)
        findings.append(
            Finding(
                "HC402",
                f"compute_reward should score every transcript the agent loop can produce; on probe "
                f"{entry['probe']!r} ({about}) it raised {entry['error']}"
                + (f" at {site}" if site else "")
                + "."
                + hint,
                'handle empty content (""), missing tool calls, tool error results and truncated rollouts; a reward '
                "that raises is logged and scored 0.0, which hides the bug during training.",
                subject=f"probe {entry['probe']}",
            )
        )
    findings += _swallowed_everywhere(s, seen)
    return findings


def _swallowed_everywhere(s: EnvSession, seen: set[str]) -> list[Finding]:
    """A bug-type exception the reward raised and caught itself on EVERY probe transcript: the reward can never
    score anything but its fallback (a parse failure on some replies is normal; on all of them it is a bug)."""
    entries = [e for e in scored_probes(s) if e["exc"] is None and e.get("traced")]
    if not entries:
        return []
    common: dict[str, tuple[BaseException, int]] = {}
    for entry in entries:
        for exc, where in entry.get("swallowed") or []:
            key = f"{type(exc).__name__}@{where}"
            previous = common.get(key)
            common[key] = (exc, (previous[1] if previous else 0) + 1)
    findings = []
    for key, (exc, count) in common.items():
        if count < len(entries) or key in seen:
            continue
        seen.add(key)
        where = key.split("@", 1)[1]
        findings.append(
            Finding(
                "HC402",
                f"compute_reward should score transcripts without raising; on every one of the {len(entries)} "
                f"probe transcripts it raised {type(exc).__name__}: {exc} at {where}, and caught it itself (a "
                "try/except returning a fallback score), so it never scores anything but the fallback.",
                "fix the line that raises; catch only what a bad model reply can cause (ValueError when parsing "
                "its text), never `except Exception` around the whole reward.",
                subject=where,
            )
        )
        if len(findings) >= 2:
            break
    return findings


def _range_problem(score: Any) -> str | None:
    """What is wrong with ``score`` as a trainer score (not a finite float in [0, 1]), or None."""
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return f"got {score!r} ({type(score).__name__})"
    if not math.isfinite(score):
        return f"got {score!r}"
    if not 0.0 <= score <= 1.0:
        return f"got {score!r}, outside [0, 1]"
    return None


_RANGE_FIX = (
    "return float(...) in [0, 1]: rescale a 0..10 or 0..100 scale (`score / 10`), then clamp: "
    "`return max(0.0, min(1.0, score))`. Bonuses (brevity, format) must fit under 1.0 with the main credit."
)


@check("HC403", "reward-range", "every score is a finite float in [0, 1]", requires=("HC201",))
def reward_range(s: EnvSession) -> list[Finding]:
    """Scores that are None, a bool, a string, NaN/inf, or outside [0, 1] (the trainer expects 0..1 floats): from
    compute_reward on any transcript (negative controls, correct answers, the env's own examples, e.g. a brevity
    bonus taking a correct answer to 1.2, or a 0..10 judge scale), or in a collected group (raw atroposlib envs
    too, e.g. a 0..100 score)."""
    from hermes_envs.conformance.checks.trajectory import collected_group

    findings = []
    seen: set[str] = set()
    scored: list[tuple[str, str, dict[str, Any]]] = []
    if s.is_hermes_env():
        scored += [(f"on probe {e['probe']!r}", f"probe {e['probe']}", e) for e in scored_probes(s)]
        positives = positive_scores(s)
        scored += [
            (f"on the gold-answer probe ({e['name']}, a correct answer)", "gold-answer probes", e)
            for e in positives["gold"]
        ]
        scored += [(f"on {e['name']}", e["name"], e) for e in positives["env_good"] + positives["env_bad"]]
    for where, subject, entry in scored:
        if entry["exc"] is not None:
            continue
        problem = _range_problem(entry["score"])
        if problem and problem not in seen:
            seen.add(problem)
            findings.append(
                Finding(
                    "HC403",
                    f"compute_reward should return a finite float in [0, 1]; {where} {problem}.",
                    _RANGE_FIX,
                    subject=subject,
                )
            )
    if findings:
        return findings
    # The scores atroposlib really receives: the only ones a raw BaseEnv has, and a last look for agent envs.
    group = collected_group(s)["group"]
    if not group:
        if not s.is_hermes_env():
            raise Skip("collect_trajectories(item) gave no scored group (see HC501)")
        return findings
    for index, score in enumerate(group.get("scores") or []):
        if _numeric(score) and not 0.0 <= score <= 1.0:
            return [
                Finding(
                    "HC403",
                    f"the scores of a collected group should be finite floats in [0, 1]; rollout {index} of "
                    f"collect_trajectories(item) scored {score!r}, outside [0, 1].",
                    _RANGE_FIX,
                    subject=f"rollout {index}",
                )
            ]
    return findings


_STATS = ("HC401", "HC402", "HC403")
#: asyncio's own machinery: a stall sampled inside it was the event loop at work (a loaded machine), not a hook.
_LOOP_MACHINERY = ("selectors.py", "selector_events.py", "base_events.py")
#: setup() runs before any rollout, so blocking there only matters when very long: this many blocking_seconds.
SETUP_STALL_FACTOR = 10


@check(
    "HC404", "reward-deterministic", "compute_reward gives the same score for the same input", requires=_STATS
)
def reward_deterministic(s: EnvSession) -> list[Finding]:
    """Rewards with randomness or clock dependence (e.g. noise added "to break ties"): the advantage becomes noise.
    Also rewards whose score depends on hash order (``list(set(words))``, ``max(set(xs), key=...)``): the same
    transcript scores differently in another process; when the reward's code builds a set, its text-only
    transcripts are scored again in two fresh interpreters with other PYTHONHASHSEEDs."""
    findings = _same_in_one_process(s)
    return findings or _same_across_processes(s)


def _same_across_processes(s: EnvSession) -> list[Finding]:
    import json

    import hermes_envs.conformance.hashseed as hashseed

    where = hashseed.reward_set_use(s.module, s.load())
    if where is None:
        return []
    entries = []
    for entry in scored_probes(s) + positive_scores(s)["all_gold"] + item_controls(s):
        messages = entry["result"].messages
        if not _numeric(entry["score"]) or any(m.get("role") == "tool" for m in messages):
            continue  # a rollout with tool calls needs its sandbox, which another process does not have
        try:
            json.dumps([entry["item"], messages])
        except (TypeError, ValueError):
            continue
        entries.append(entry)
    entries = entries[:60] + _other_shapes(s)
    if not entries:
        return []
    found = _differs_by_set_order(s, entries, where)
    if found:
        return found
    cases = [
        {
            "item": e["item"],
            "messages": e["result"].messages,
            "turns_used": e["result"].turns_used,
            "finished_naturally": e["result"].finished_naturally,
        }
        for e in entries
    ]
    with s.timed("hashseed"):
        handles = hashseed.start_workers(s.path, s.load().__name__, cases, s.tmp / "hashseed")
        elsewhere = hashseed.collect(handles)
    for seed, scores in sorted(elsewhere.items()):
        for entry, other in zip(entries, scores):
            if _numeric(other) and abs(float(other) - float(entry["score"])) > 1e-9:
                name = entry.get("name") or f"probe {entry.get('probe')!r}"
                return [
                    Finding(
                        "HC404",
                        f"compute_reward should give the same score in every process; on {name} it scored "
                        f"{entry['score']!r} here and {other!r} in an interpreter with PYTHONHASHSEED={seed}. "
                        f"The reward builds {where}: the iteration order of a set of strings changes from one "
                        "process to the next.",
                        _HASH_FIX,
                        subject=name,
                    )
                ]
    return []


def _other_shapes(s: EnvSession) -> list[dict[str, Any]]:
    """Each proven scalar gold in every answer shape (a set of the reply's words changes with its length)."""
    from hermes_envs.conformance.golds import ANSWER_FORMATS
    from hermes_envs.conformance.probes import say

    out = []
    for gold in positive_scores(s)["gold"]:
        if gold.get("kind") != "scalar" or not gold.get("template"):
            continue
        for _shape, template in ANSWER_FORMATS:
            if template != gold["template"]:
                result, task_id = s.run_probe(
                    gold["item"], say(template.format(v=gold["value"])), 3, "shape", "gold"
                )
                entry = dict(
                    _score(s, gold["item"], result, task_id, "gold"), item=gold["item"], result=result
                )
                entry["name"] = f"field {gold['field']!r} answered as {template.format(v=gold['value'])!r}"
                if _numeric(entry["score"]):
                    out.append(entry)
    return out


def _differs_by_set_order(s: EnvSession, entries: list[dict[str, Any]], where: str) -> list[Finding]:
    """Score ``entries`` with the env module's sets iterating sorted, then reversed: a difference is hash order."""
    import copy

    from hermes_envs.conformance.hashseed import set_order
    from hermes_envs.tools import ToolContext, cleanup_sandbox

    env = s.env()
    for entry in entries:
        scores = []
        for reverse in (False, True):
            ctx = ToolContext(f"set-order-{len(scores)}-{id(entry)}")
            try:
                with set_order(s.module, reverse):
                    result, item = copy.deepcopy(entry["result"]), entry["item"]
                    scores.append(
                        s.run_env(
                            lambda _env, r=result, c=ctx, i=item: env.compute_reward(i, r, c), phase="rewards"
                        )
                    )
            except Exception:
                scores.append(None)
            finally:
                ctx.cleanup()
                cleanup_sandbox(ctx.task_id)
        if all(_numeric(x) for x in scores) and abs(scores[0] - scores[1]) > 1e-9:
            name = entry.get("name") or f"probe {entry.get('probe')!r}"
            return [
                Finding(
                    "HC404",
                    f"compute_reward should not depend on the order a set iterates in; on {name} it scored "
                    f"{scores[0]!r} with the reward's sets iterating in one order and {scores[1]!r} in another. "
                    f"The reward builds {where}; a set of strings iterates in a different order in every process "
                    "(PYTHONHASHSEED), so the same transcript scores differently from run to run.",
                    _HASH_FIX,
                    subject=name,
                )
            ]
    return []


_HASH_FIX = (
    "never let a set's order decide: sort it (`sorted(set(words))`), compare sets as sets (`set(got) == "
    "set(want)`), keep lists as lists to compare in order, and break ties by a rule (`max(sorted(xs), key=...)`)."
)


def _same_in_one_process(s: EnvSession) -> list[Finding]:
    for entry in scored_probes(s):
        first, second = entry["score"], entry["score2"]
        if _numeric(first) and _numeric(second) and abs(first - second) > 1e-9:
            return [
                Finding(
                    "HC404",
                    f"compute_reward should return the same score when called twice on the same item and transcript; "
                    f"on probe {entry['probe']!r} got {first!r} then {second!r}.",
                    "remove randomness and time from the reward (no random.*, time.time(), unseeded sampling); if a "
                    "judge samples, call it at temperature 0. Do not add noise to break ties: a group of equal scores "
                    "carries no signal and is meant to be dropped.",
                    subject=f"probe {entry['probe']}",
                )
            ]
    return []


@check("HC405", "no-mutation", "compute_reward does not mutate the messages or the item", requires=_STATS)
def no_mutation(s: EnvSession) -> list[Finding]:
    """Rewards that pop/append/edit ``result.messages`` or the item: the trainer then tokenizes a changed transcript."""
    findings = []
    seen: set[str] = set()
    for entry in scored_probes(s):
        for what, change in entry["mutated"]:
            if what in seen:
                continue
            seen.add(what)
            findings.append(
                Finding(
                    "HC405",
                    f"compute_reward should leave {what} unchanged; on probe {entry['probe']!r} {change}.",
                    "read without changing: `last = result.messages[-1]` instead of `.pop()`, and copy before editing "
                    "(`messages = list(result.messages)`, `item = dict(item)`). The base tokenizes result.messages "
                    "after the reward, so an edit changes what the model is trained on.",
                    subject=f"probe {entry['probe']}",
                )
            )
    return findings


def _answers_in_prompt(s: EnvSession, items: list[Any]) -> str:
    """The proven (or answer-like) gold values of ``items`` as shown in their own prompts, when every item's prompt
    shows its answer as a word (an echo of the prompt then holds the answer by construction); else ``""``."""
    import re

    from hermes_envs.conformance.golds import _scalar_fields

    env = s.env()
    proven = {_key(e["item"]): e.get("value") for e in positive_scores(s)["gold"] if e.get("value")}
    shown = []
    for item in items:
        try:
            prompt = env.format_prompt(item)
        except Exception:
            continue
        values = [proven[_key(item)]] if _key(item) in proven else [v for _k, v in _scalar_fields(item)[:1]]
        hits = [
            repr(v)
            for v in values
            if isinstance(prompt, str) and re.search(rf"(?<![\w/]){re.escape(v)}(?![\w/])", prompt)
        ]
        if not hits:
            return ""
        shown += hits
    return ", ".join(sorted(set(shown))[:3])


@check("HC406", "controls-low", "negative controls score under the ceiling", requires=_STATS)
def controls_low(s: EnvSession) -> list[Finding]:
    """A reward too lenient: doing nothing, refusing, echoing the prompt or spamming tools earns credit."""
    ceiling = s.settings.control_ceiling
    per_control: dict[str, list[float]] = {}
    examples: dict[str, Any] = {}
    for entry in scored_probes(s):
        if entry["probe"] in CONTROLS and _numeric(entry["score"]):
            per_control.setdefault(entry["probe"], []).append(float(entry["score"]))
            examples.setdefault(entry["probe"], entry["item"])
    abouts: dict[str, str] = {}
    for entry in positive_scores(s)["env_bad"] + item_controls(s):
        if _numeric(entry["score"]):
            per_control.setdefault(entry["name"], []).append(float(entry["score"]))
            examples.setdefault(entry["name"], entry["item"])
            abouts[entry["name"]] = entry.get("about") or "a transcript the env itself calls bad"
    findings = []
    for name, scores in per_control.items():
        mean = sum(scores) / len(scores)
        if mean > ceiling:
            about = PROBES[name][2] if name in PROBES else abouts[name]
            in_prompt = _answers_in_prompt(
                s,
                [
                    e["item"]
                    for e in scored_probes(s)
                    if e["probe"] == name and _numeric(e["score"]) and e["score"] > ceiling
                ],
            )
            if name == "echo_prompt" and in_prompt:
                findings.append(
                    Finding(
                        "HC406",
                        f"a negative control should score at most {ceiling:g} (control_ceiling); {name!r} ({about}) "
                        f"got a mean of {mean:.3g} because the prompt itself holds the answer ({in_prompt}), and "
                        "the reward takes the answer from anywhere in the reply (a warning: with the answer in the "
                        "prompt, an echo is no pure negative control; HC302 says whether it leaked).",
                        "read the answer from a marked place (the last 'Answer:' line, a <answer> tag) so that "
                        "repeating the question or the options earns nothing.",
                        Severity.WARNING,
                        subject=f"control {name}",
                    )
                )
                continue
            findings.append(
                Finding(
                    "HC406",
                    f"a negative control should score at most {ceiling:g} (control_ceiling); {name!r} ({about}) got a "
                    f"mean of {mean:.3g} over {len(scores)} item(s), e.g. on item {_short(examples[name], 120)}.",
                    "give credit only for evidence of success (the right answer, the file actually written); drop "
                    "partial credit for finishing, formatting or calling tools, and never put the answer in the "
                    "prompt (an echo of the prompt must not be correct).",
                    subject=f"control {name}",
                )
            )
    return findings


@check(
    "HC407",
    "reward-varies",
    "a correct answer scores above the controls (the reward can vary)",
    requires=_STATS,
)
def reward_varies(s: EnvSession) -> list[Finding]:
    """A reward that never rewards a correct answer (type mismatch, wrong field): every group gets the same score
    and ``ensure_scores_are_not_same`` drops it, so nothing is learned."""
    found = positive_scores(s)
    findings = []
    if found["error"]:
        findings.append(
            Finding(
                "HC407",
                f"the env's example transcripts should load; {found['error']}.",
                "return {'good': [[turn, ...], ...], 'bad': [...]} (see docs/checks.md).",
            )
        )
    controls = control_scores(s)
    for entry in found["env_good"]:
        best = best_control(s, controls, entry["item"])
        if not (_numeric(entry["score"]) and entry["score"] > best[1]):
            findings.append(
                Finding(
                    "HC407",
                    f"{entry['name']} should score above every control; got {entry['score']!r} (control "
                    f"{best[0]!r} scored {best[1]:g}) on item {_short(entry['item'], 120)}.",
                    "fix the reward (or the transcript): a known-good rollout must earn more than doing nothing.",
                    subject=entry["name"],
                )
            )
    proved = {_key(e["item"]) for e in found["gold"]} | {
        _key(e["item"])
        for e in found["env_good"]
        if _numeric(e["score"]) and e["score"] > best_control(s, controls, e["item"])[1]
    }
    items = s.probe_items()
    missing = [item for item in items if _key(item) not in proved]
    if not missing or findings:
        return findings
    all_scores = sorted({round(float(e["score"]), 6) for e in scored_probes(s) if _numeric(e["score"])})
    item = missing[0]
    tried = found["tried"].get(_key(item), [])
    answer_like = derivable(item)
    constant = f" every probe scored {all_scores[0]:g}," if len(all_scores) == 1 else ""
    message = (
        f"a correct answer should score above the controls;{constant} none of the {len(tried)} gold-answer "
        f"probes ({', '.join(tried[:3])}{', ...' if len(tried) > 3 else ''}) beat the best control on item "
        f"{_short(item, 160)}."
    )
    fix = (
        "compare like with like (str(item['answer']) vs the parsed text, strip and normalise both) and check "
        "the reward reads the field that holds the answer; if your answers cannot be derived from the item, "
        "ship known-good transcripts with `def conformance_transcripts(self, item)` (docs/checks.md)."
    )
    if not (answer_like or found["env_good"]):
        # "every probe scored 0" then says the probes found no correct answer, not that the reward is wrong.
        raise NotApplicable(
            f"no correct answer could be derived for item {_short(item, 120)} (no answer-like field the "
            f"{len(tried)} gold-answer probes could use, no conformance_transcripts()); ship known-good "
            "transcripts with `def conformance_transcripts(self, item)` to have the reward's range checked"
        )
    findings.append(Finding("HC407", message, fix, subject="gold-answer probes"))
    return findings


@check(
    "HC408",
    "no-loop-blocking",
    "setup, compute_reward and evaluate do not block the event loop",
    requires=("HC201",),
)
def no_loop_blocking(s: EnvSession) -> list[Finding]:
    """Synchronous work (time.sleep, requests, subprocess.run, ctx.terminal) in async hooks stalls every rollout.
    A stall spent inside ToolContext's synchronous methods (the contract's API) is a warning naming their awaitable
    twins; any other blocking is an error."""
    s.setup_done()
    if s.is_hermes_env():
        scored_probes(s)
        positive_scores(s)
    s.eval_observation()
    findings = []
    seen: set[tuple[str, str]] = set()
    for stall in sorted(s.watchdog.stalls, key=lambda st: -st.seconds):
        key = (stall.phase, stall.where)
        if key in seen or stall.phase not in ("setup", "rewards", "gold", "evaluate", "probes"):
            continue
        seen.add(key)
        if stall.inner and any(f"({name}:" in stall.inner for name in _LOOP_MACHINERY):
            continue  # the loop itself was selecting / writing a socket: the machine stalled, not the env's code
        if stall.phase == "setup" and stall.seconds <= SETUP_STALL_FACTOR * s.settings.blocking_seconds:
            continue  # nothing else runs during setup; only a very long stall matters (serve-mode heartbeats)
        hook = {"rewards": "compute_reward", "gold": "compute_reward", "probes": "a rollout"}.get(
            stall.phase, stall.phase
        )
        severity = Severity.WARNING if stall.phase == "setup" else Severity.ERROR
        expectation = (
            f"{hook} should not block the event loop for more than {s.settings.blocking_seconds:g} s "
            f"(blocking_seconds); {stall.where}"
        )
        inner = f", inside {stall.inner}" if stall.inner and stall.inner != stall.where else ""
        held = f" held it for {stall.seconds:.2f} s"
        if stall.sync_tool_calls and stall.seconds - stall.sync_tool_seconds <= s.settings.blocking_seconds:
            # The contract's own synchronous ToolContext API (upstream's blocks the loop the same way): a warning.
            methods = ", ".join(f"ctx.{name}()" for name in stall.sync_tool_calls)
            twins = ", ".join(f"`await ctx.a{name}(...)`" for name in stall.sync_tool_calls)
            findings.append(
                Finding(
                    "HC408",
                    f"{expectation}{held}, {stall.sync_tool_seconds:.2f} s of it in ToolContext's synchronous {methods}, "
                    "stalling every other rollout (a warning: the contract's ToolContext is synchronous, and "
                    "upstream's blocks the loop the same way).",
                    f"use the awaitable twins, which do the same in the rollout's sandbox off the event loop: "
                    f"{twins}.",
                    Severity.WARNING,
                    subject=stall.where,
                )
            )
            continue
        findings.append(
            Finding(
                "HC408",
                f"{expectation}{inner}{held}, stalling every other rollout.",
                "await instead of blocking: `await asyncio.sleep(...)`, `await ctx.aterminal(...)` / "
                "`await asyncio.to_thread(fn, ...)` for blocking calls, an async HTTP client for remote judges.",
                severity,
                subject=stall.where,
            )
        )
    return findings


@check(
    "HC409",
    "judge-once",
    "compute_reward asks the model (a judge) at most once per rollout",
    severity=Severity.WARNING,
    requires=("HC402",),
)
def judge_once(s: EnvSession) -> list[Finding]:
    """A reward that calls its LLM judge more than once per rollout: double the cost and latency of every group,
    and two verdicts that can disagree (the guide's "calling an LLM judge twice")."""
    worst = max(scored_probes(s), key=lambda e: e.get("model_requests", 0), default=None)
    if worst is None or worst.get("model_requests", 0) <= 1:
        return []
    return [
        Finding(
            "HC409",
            f"compute_reward should ask the judge at most once per rollout; on probe {worst['probe']!r} it made "
            f"{worst['model_requests']} model requests for one call.",
            "call the judge once and keep its verdict (e.g. parse score and explanation from one reply); if "
            "evaluate() needs the verdict too, reuse the reward's instead of asking again.",
            Severity.WARNING,
            subject=f"probe {worst['probe']}",
        )
    ]
