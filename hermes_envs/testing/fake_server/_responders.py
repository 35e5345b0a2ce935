"""Which turn answers a request: the script's turn for this position (checked against its match conditions and
the tools offered), else the policy's answer, else a miss that says why."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._policies import Policy, turn_from_policy_result
from ._records import Call
from ._replies import Miss
from ._requests import BadRequest
from ._turns import Script, Turn
from ._view import RequestView, short, tool_names

__all__ = ["respond"]


def respond(
    call: Call, view: RequestView, kind: str, script: Script | None, policy: Policy | None, marker: str
) -> tuple[Turn, int | None]:
    """The turn answering this request and its 0-based script index (None for a policy), or raise a Miss.

    ``kind`` is "chat" (position = assistant messages so far) or "text" (position = ``marker`` occurrences in
    the prompt).
    """
    problem: str | None = None
    if script is not None:
        found = _select(script, view, kind, marker)
        if isinstance(found, str):
            problem = f"{call.method} {call.route}: {found}"
        else:
            turn, index = found
            call.matched_turn, call.turn_index, call.responder = turn, index, "script"
            return turn, index
    if policy is not None:
        try:
            result = policy(dict(view.body))
            turn = result if type(result) is Turn else turn_from_policy_result(result)
        except BadRequest:  # the request's fault (a tool schema the policy cannot use): a 400 naming it
            raise
        except Exception as e:  # the policy is user code: report it as a failure, not a server crash
            name = getattr(policy, "__name__", policy)
            raise Miss(
                f"policy {name!r} should answer the request; it raised {type(e).__name__}: {e}",
                500,
                "policy_error",
            ) from None
        if kind == "chat" and turn.tool_calls:
            bad = tool_problems(turn, view)
            if bad:
                name = getattr(policy, "__name__", policy)
                raise Miss(f"policy {name!r} answered with {turn.describe()}, but {bad}")
        call.matched_turn, call.responder = turn, "policy"
        return turn, None
    if problem is None:
        problem = (
            f"{call.method} {call.route} should be answered by a script or a policy; got a server with "
            "neither.\nFix: pass script=... or policy=... to FakeOpenAIServer."
        )
    raise Miss(problem)


def _select(script: Script, view: RequestView, kind: str, marker: str) -> tuple[Turn, int] | str:
    if script.keyed:
        prompt = view.first_user or ""
        for key, sub in script.keyed:
            if re.search(key, prompt):
                script = sub
                break
        else:
            keys = ", ".join(f"/{k}/" for k, _ in script.keyed)
            return (
                f"Request should match one of the keyed scripts ({keys}) by its first user message; "
                f"got {short(prompt)}.\nFix: add a key matching this prompt, or check which item the env sends."
            )
    k = view.assistant_count if kind == "chat" else text_position(view.prompt_text or "", marker)
    turns = script.turns
    if k >= len(turns):
        last = turns[-1] if turns else None
        near = f"\n  nearest expected turn (turn {len(turns)}): {last.describe()}" if last else ""
        return (
            f"Request should match scripted turn {k + 1} of {script.source} (the conversation already holds "
            f"{k} assistant message{'s' if k != 1 else ''}); got a request past the script's end: the script "
            f"has {len(turns)} turn{'s' if len(turns) != 1 else ''}.\n  request: {view.summary(kind)}{near}\n"
            "Fix: add a turn for this request, or check why the env asks again after the final answer "
            "(max_turns, a missing stop condition, or a retry after an error)."
        )
    turn = turns[k]
    diffs = turn.match.mismatches(view) if turn.match is not None else []
    if kind == "chat":
        tp = tool_problems(turn, view)
        if tp:
            diffs.append(tp)
    if diffs:
        lines = "\n".join(f"  - {d}" for d in diffs)
        return (
            f"Request should match scripted turn {k + 1} of {script.source} ({turn.describe()}); got a "
            f"request that differs:\n{lines}\n  request: {view.summary(kind)}\n"
            "Fix: change the turn's match conditions or the env's request."
        )
    return turn, k


def text_position(prompt: str, marker: str) -> int:
    """A text prompt's turn position: how many assistant turns it already holds (``marker`` occurrences)."""
    if not marker:
        return 0
    n = prompt.count(marker)
    if n and prompt.rstrip().endswith(marker):
        n -= 1
    return n


def tool_problems(turn: Turn, view: RequestView) -> str | None:
    """Why ``turn``'s tool calls do not fit the request (tools not offered, tool_choice), or None."""
    if not turn.tool_calls:
        return None
    if turn.fault is not None and turn.fault.effect.hides_tool_check:
        return None
    body: Mapping[str, Any] = view.body
    choice = body.get("tool_choice")
    if choice == "none":
        return "tool_choice: the request set tool_choice='none' but the turn calls tools"
    offered = tool_names(body.get("tools"))
    names = [c.name for c in turn.tool_calls]
    if not offered:
        return f"tools: the turn calls {names!r} but the request offered no tools (pass tools=[...])"
    missing = [n for n in names if n not in offered]
    if missing:
        return f"tools: the turn calls {missing!r}, which the request did not offer; offered {offered!r}"
    if isinstance(choice, Mapping):
        forced = (choice.get("function") or {}).get("name")
        if forced and any(n != forced for n in names):
            return f"tool_choice: the request forces {forced!r} but the turn calls {names!r}"
    return None
