"""HC605 — a rollout's tools answer from its own state: the same tool calls get the same results whether they run
alone, after another rollout made them, or at the same time as one.

A custom tool that keeps its state on a module-level object (one cart, one board, one database file) or under a key
the model passes (a game id from the item) instead of the rollout's ``task_id`` lets rollouts change each other's
world: concurrent rollouts of a group check out each other's carts or play on one board, and a later rollout finds
an earlier one's moves. The reward then scores interleaving, not behaviour. The kit plays one fixed script of calls
to the env's own tools (arguments from the schema, the item and ids the tools returned), several times alone, then
two copies at once, and compares what the tools returned. Tool results that vary run to run (random, clocks) are
not judged.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.env._prompt import initial_messages_of
from hermes_envs.tools import cleanup_sandbox

__all__: list[str] = []

#: At most this many of the env's own tools go into the script; called in turn, 16 calls at most.
MAX_TOOLS = 6
#: The longest one script's rollouts may take: tools slower than that are not replayed (the check is skipped).
RUN_SECONDS = 60.0
#: How much of each tool result is compared (a long listing differs early if it differs at all).
RESULT_CHARS = 2000
_ID = re.compile(r"\b(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]{1,40}\b")
_VOLATILE = re.compile(r"\b[0-9a-f]{8,}\b|\d+(?:\.\d+)?")


def _own_tools(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The offered tools whose handler the env's own code defines (hermes-envs' built-ins keep per-task state)."""
    from hermes_envs.tools import registry

    out = []
    for schema in schemas:
        fn = schema.get("function") or schema
        try:
            handler = registry.get(str(fn.get("name"))).handler
        except KeyError:  # a tool the env dispatches itself is not the kit's to call
            continue
        if not (getattr(handler, "__module__", "") or "").startswith("hermes_envs"):
            out.append(fn)
    return out[:MAX_TOOLS]


_FAILED = re.compile(r"error|no results|not found|no such|invalid|unknown|cannot|can't|empty", re.I)
_STOPWORDS = frozenset("the and for with that this from your you are was were have has not all any".split())


def _item_strings(item: Any) -> list[str]:
    """Strings a model would copy from the item: its short one-line values (one level down), then their words."""
    values = list(item.values()) if isinstance(item, dict) else [item]
    texts: list[str] = []
    for value in values:
        texts.extend(
            v for v in (value.values() if isinstance(value, dict) else [value]) if isinstance(v, str)
        )
    out = [t for t in texts if 0 < len(t) <= 60 and "\n" not in t]
    for text in texts:
        out.extend(w for w in re.findall(r"[A-Za-z]{3,}", text) if w.lower() not in _STOPWORDS)
    return list(dict.fromkeys(out))


def _number(spec: dict[str, Any], step: int) -> int:
    """A small in-range number that moves with the pass (1, 2, 3 ... from the minimum)."""
    low, high = spec.get("minimum", 1), spec.get("maximum")
    value = max(int(low), 1) + step
    return min(value, int(high)) if high is not None else value


_PLAIN: dict[str, Any] = {"boolean": False, "array": [], "object": {}}


def _history(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result) of each tool call so far in a conversation."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {}
            calls[str(call.get("id"))] = (str(fn.get("name")), args if isinstance(args, dict) else {})
        if m.get("role") == "tool" and str(m.get("tool_call_id")) in calls:
            name, args = calls[str(m.get("tool_call_id"))]
            out.append((name, args, str(m.get("content") or "")))
    return out


@dataclass(frozen=True)
class _Script:
    """The calls one rollout makes: the env's tools in turn, arguments from the schema, the item and the ids that
    earlier calls returned; a string that made a call fail is not given to that parameter again. A function of
    the conversation alone, so every copy of the script makes the same calls as long as its tools answer the same."""

    tools: tuple[dict[str, Any], ...]
    strings: tuple[str, ...]

    @property
    def length(self) -> int:
        return min(16, len(self.tools) * 4)

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        history = _history(body.get("messages") or [])
        if len(history) >= self.length:
            return {"content": "I don't know."}
        fn, step = self.tools[len(history) % len(self.tools)], len(history) // len(self.tools)
        tried: set[tuple[str, str, str]] = set()
        ids: list[str] = []
        for name, called, text in history:
            if _FAILED.search(text) or not text.strip():
                tried.update((name, k, str(v)) for k, v in called.items())
            else:
                ids.extend(_ID.findall(text))
        candidates = list(dict.fromkeys([*reversed(ids), *self.strings])) or ["a"]
        params = fn.get("parameters") or {}
        props = params.get("properties") or {}
        args: dict[str, Any] = {}
        for name in props:
            if name not in (params.get("required") or list(props)):
                continue
            spec = props.get(name) or {}
            if spec.get("enum"):
                args[name] = spec["enum"][step % len(spec["enum"])]
            elif spec.get("type") in ("integer", "number"):
                args[name] = _number(spec, step)
            elif spec.get("type") in _PLAIN:
                args[name] = _PLAIN[spec["type"]]
            else:
                fresh = [c for c in candidates if (fn["name"], name, c) not in tried]
                args[name] = (fresh or candidates)[0]
        return {"content": "", "tool_calls": [{"name": fn["name"], "arguments": args}]}


#: One rollout's tool calls and what they returned: ((name, arguments json), result) per call.
Trace = tuple[tuple[tuple[str, str], str], ...]


def _trace(result: Any, task_id: str) -> Trace:
    calls: dict[str, tuple[str, str]] = {}
    out = []
    for m in result.messages:
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            calls[str(call.get("id"))] = (str(fn.get("name")), str(fn.get("arguments")))
        if m.get("role") == "tool":
            text = str(m.get("content") or "").replace(task_id, "<task>")[:RESULT_CHARS]
            out.append((calls.get(str(m.get("tool_call_id")), ("?", "")), text))
    return tuple(out)


def _run(s: EnvSession, item: Any, script: _Script, copies: int) -> list[Trace]:
    """``copies`` rollouts of ``item`` at once (real agent loop, fresh task ids), each playing ``script``."""
    from hermes_envs.agent import HermesAgentLoop

    env = s.env()
    schemas, names = s.tools()
    task_ids = [f"probe-tool-state-{uuid.uuid4().hex[:8]}" for _ in range(copies)]
    loops = [
        HermesAgentLoop(
            env.server,
            schemas,
            names,
            max_turns=script.length + 1,
            task_id=task_id,
            temperature=1.0,
            tool_call_parser=getattr(env.config, "tool_call_parser", "hermes"),
        )
        for task_id in task_ids
    ]

    async def together(_env: Any) -> list[Any]:
        return list(await asyncio.gather(*(loop.run(initial_messages_of(env, item)) for loop in loops)))

    try:
        with s.responding(script.respond):
            results = s.run_env(together, timeout=RUN_SECONDS, phase="tool-state")
    except TimeoutError:
        raise Skip(
            f"one script of {script.length} calls to the env's tools took over {RUN_SECONDS:.0f} s, too slow to "
            "replay the several times this check needs"
        ) from None
    finally:
        for task_id in task_ids:
            cleanup_sandbox(task_id)
    return [_trace(r, t) for r, t in zip(results, task_ids)]


def _masked(trace: Trace) -> Trace:
    return tuple((call, _VOLATILE.sub("#", text)) for call, text in trace)


def _first_difference(a: Trace, b: Trace) -> int | None:
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return k
    return None if len(a) == len(b) else min(len(a), len(b))


def _describe(k: int, ref: Trace, other: Trace) -> tuple[str, str, str, str]:
    """(the tool's name, the call, what it returned in ``ref``, in ``other``) at step ``k``."""
    (name, args), first = ref[k] if k < len(ref) else (("?", ""), "(no call)")
    second = other[k][1] if k < len(other) else "(no call)"
    return name, f"call #{k + 1} {name}({args})", first[:160], second[:160]


def _compare(traces: Sequence[Trace], reference: Trace, masked: bool) -> tuple[int, Trace] | None:
    norm = _masked if masked else (lambda t: t)
    for trace in traces:
        k = _first_difference(norm(reference), norm(trace))
        if k is not None:
            return k, trace
    return None


_FIX = (
    "keep each rollout's tool state under the task_id the tool receives (a tool function with a `task_id` "
    "parameter gets the rollout's own), or in the rollout's sandbox, never on a module-level object or under a key "
    "the model passes; the reward reads the same per-task state and may drop it after scoring."
)


@check(
    "HC605",
    "tool-state-per-rollout",
    "the env's own tools answer each rollout from its own state",
    requires=("HC201",),
    why=(
        "A rollout whose tools answer from shared state (one cart, one board, one database file, or a key the "
        "model passes) is scored on what other rollouts did: concurrent rollouts of a group check out each other's "
        "carts, a later rollout finds an earlier one's moves, and the reward trains on interleaving and history. "
        "Evidence: the kit plays one fixed script of calls to the env's own tools alone several times, then two "
        "copies at once, and compares what the tools returned (results that vary run to run are not judged)."
    ),
    fix=(
        "Keep each rollout's tool state under the task_id the tool receives (declare a `task_id` parameter), or in "
        "the rollout's sandbox; never on a module-level object or under an id the model passes. The finding names "
        "the call and what it returned alone and alongside another rollout."
    ),
)
def tool_state_per_rollout(s: EnvSession) -> list[Finding]:
    """Custom tools that keep state on a module-level object or under a key the model passes (one cart, one
    board, one database file for everybody): concurrent rollouts change each other's world and a later rollout
    finds an earlier one's work, so rewards score interleaving and history, not behaviour."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no agent tools (not an agent env)")
    schemas, _names = s.tools()
    tools = _own_tools(schemas)
    if not tools:
        raise NotApplicable(
            "the env offers no tool of its own (hermes-envs' built-in tools keep per-task state)"
        )
    item = probe_items(s)[0]
    script = _Script(tuple(tools), tuple(_item_strings(item)))
    first, second = _run(s, item, script, 1)[0], _run(s, item, script, 1)[0]
    if not any(text for _call, text in first):
        raise Skip("the env's tools returned nothing to compare")
    volatile = _first_difference(first, second) is not None
    if volatile and _first_difference(_masked(first), _masked(second)) is not None:
        return _carried_over(s, item, script, [first, second])
    return _concurrent(s, item, script, second, volatile) or _canary(s, item, script, tools)


def _carried_over(s: EnvSession, item: Any, script: _Script, runs: list[Trace]) -> list[Finding]:
    """Runs alone differ: an error when a later run then answers as the one before it (state the first left
    behind, e.g. a cart checked out) or every run's result holds all of the one before and more (state that
    accumulates, e.g. one list of notes); else the tools vary (random, clocks) and nothing is judged."""
    runs = [*runs, _run(s, item, script, 1)[0]]
    if _first_difference(_masked(runs[1]), _masked(runs[2])) is None:
        k = _first_difference(_masked(runs[0]), _masked(runs[1]))
        assert k is not None
        name, call, before, after = _describe(k, runs[0], runs[1])
        how = "and the same again in a third"
    else:
        runs.append(_run(s, item, script, 1)[0])
        step = _growing(runs)
        if step is None:
            raise Skip("the env's tools answer the same calls differently run to run (random or time-dependent), "
                       "so what one rollout does to another cannot be told from that")  # fmt: skip
        name, call, before, after = _describe(step, runs[0], runs[1])
        how = f"and more in each of {len(runs) - 2} runs after: {_describe(step, runs[0], runs[-1])[3]!r}"
    return [
        Finding(
            "HC605",
            f"a rollout's tools should answer from its own state; rollouts of one item made the same tool calls one "
            f"after the other, each with its own task id: {call} returned {before!r} in the first and {after!r} in "
            f"the next ({how}): earlier rollouts' calls changed what the next one sees.",
            _FIX,
            subject=f"tool {name}",
        )
    ]


def _growing(runs: list[Trace]) -> int | None:
    """The first step where the runs' results differ and each run's result holds every word of the one before it,
    and more (state accumulating across rollouts), or None."""
    k = _first_difference(_masked(runs[0]), _masked(runs[1]))
    if k is None or any(len(run) <= k for run in runs):
        return None
    words = [Counter(re.findall(r"\w+", run[k][1])) for run in runs]
    grows = all(a <= b and a != b for a, b in zip(words, words[1:]))
    return k if grows else None


def _concurrent(s: EnvSession, item: Any, script: _Script, alone: Trace, volatile: bool) -> list[Finding]:
    """Two copies of the script at once, twice: an error when a copy's results differ from a run alone both
    times."""
    found: tuple[int, Trace] | None = None
    for _attempt in range(2):  # a difference must show again to be reported
        found = _compare(_run(s, item, script, 2), alone, volatile)
        if found is None:
            return []
    assert found is not None
    k, other = found
    name, call, before, together = _describe(k, alone, other)
    return [
        Finding(
            "HC605",
            f"a rollout's tools should answer from its own state; two rollouts of one item made the same tool calls "
            f"at the same time (twice): {call} returned {together!r} in one of them but {before!r} when a rollout "
            "made the same calls alone: concurrent rollouts change each other's tool state.",
            _FIX,
            subject=f"tool {name}",
        )
    ]


def _canary(s: EnvSession, item: Any, script: _Script, tools: list[dict[str, Any]]) -> list[Finding]:
    """One rollout gives the tools a word no other rollout uses; an error when a later rollout's tool results
    show it (one rollout's arguments stored where another reads)."""
    canary = f"kit{uuid.uuid4().hex[:8]}"
    _run(s, item, _Script(tuple(tools), (canary, *script.strings)), 1)
    later = _run(s, item, script, 1)[0]
    for k, ((name, args), text) in enumerate(later):
        if canary in text:
            return [
                Finding(
                    "HC605",
                    f"a rollout's tools should answer from its own state; one rollout gave the tools the word "
                    f"{canary!r}, and a later rollout of the same item (its own task id, never sending that word) "
                    f"got it back from call #{k + 1} {name}({args}): {text[:160]!r}. One rollout's arguments are "
                    "stored where every rollout reads.",
                    _FIX,
                    subject=f"tool {name}",
                )
            ]
    return []
