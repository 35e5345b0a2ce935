"""Parity (HC709-HC712): the same task seen two ways must look the same to the model.

A training rollout and an evaluate() rollout are compared by the REQUESTS the fake model received (which tools it
was offered, what system prompt it was told, what it was asked about an item evaluate() scored, how many tokens and
turns it was given); ``format_prompt`` is called twice for one item; evaluate() is run twice. Differences a correct
env has on purpose (eval at temperature 0, eval-only text added around the prompt, a larger budget) are never
compared. A difference that takes from eval something training gives (a tool, the system prompt, the item's own
prompt text, token or turn budget) is an error; what rests on a guess (a random subset per eval) is a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hermes_envs._chat import offered_tool_names
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession

#: How many more times HC710 asks format_prompt for one item's text (a random choice among few wordings can repeat).
PROMPT_CALLS = 4


def _first_requests(requests: Iterable[Any]) -> list[dict[str, Any]]:
    """Bodies of the first request of each conversation (no assistant or tool message yet)."""
    out = []
    for call in requests:
        body = getattr(call, "body", None) or {}
        messages = body.get("messages") or []
        if not messages or any(m.get("role") in ("assistant", "tool") for m in messages):
            continue
        out.append(body)
    return out


def _system(body: dict[str, Any]) -> str:
    """The system prompt of a request ("" when it has none)."""
    texts = [m.get("content") for m in body.get("messages") or [] if m.get("role") == "system"]
    return "\n".join(t for t in texts if isinstance(t, str))


def _user(body: dict[str, Any]) -> str:
    users = [m.get("content") for m in body.get("messages") or [] if m.get("role") == "user"]
    return users[0] if users and isinstance(users[0], str) else ""


def _rollouts(s: EnvSession) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
    """(first requests of the training group's rollouts, first requests of evaluate()'s rollouts, the item).

    Training rollouts are the requests whose user message is the item's own prompt (a judge's request quotes an
    answer); eval rollouts are the first requests evaluate() made that are not a judge's (they do not quote the
    fake model's answer)."""
    from hermes_envs.conformance._observations.evaluation import EVAL_ANSWER, EvalObservation
    from hermes_envs.conformance._observations.group import CollectedGroup
    from hermes_envs.conformance._observations.rollouts import probe_items
    from hermes_envs.conformance.checks.trajectory import eval_only
    from hermes_envs.env._prompt import format_prompt_of

    if not s.is_hermes_env():
        raise NotApplicable(
            "the env has no format_prompt (a raw atroposlib env): its prompts cannot be matched"
        )
    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    item = probe_items(s)[0]
    prompt = format_prompt_of(s.env(), item)
    group = s.observe(CollectedGroup)
    train = [b for b in _first_requests(group.requests) if _user(b) == prompt]
    observed = s.observe(EvalObservation)
    if observed.error:
        raise Skip(f"evaluate() raised {observed.error} (see HC202)")
    evals = [
        b
        for b in _first_requests(observed.requests)
        if EVAL_ANSWER not in _user(b) and "I think the answer is" not in _user(b)
    ]
    if not train:
        raise Skip("no training rollout of the probe item reached the model (see HC501)")
    if not evals:
        raise Skip("evaluate() started no rollout (see HC202)")
    return train, evals, item


def _names(body: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(offered_tool_names(body)))


@check(
    "HC709",
    "train-eval-parity",
    "evaluate() tells the model what training tells it (tools, system prompt, the same item's prompt)",
    requires=("HC501", "HC701"),
    why=(
        "An eval that offers other tools than training, leaves out the system prompt or rewords the item's prompt "
        "measures a task the policy was not trained on: its accuracy says nothing about training progress."
    ),
    fix=(
        "Build eval rollouts as training does: `self.initial_messages(item)` and the tools of "
        "`self._resolve_tools_for_group()`."
    ),
)
def train_eval_parity(s: EnvSession) -> list[Finding]:
    """evaluate() building its own requests and drifting from training: other tools offered (a tool the policy
    learned to use is missing, or one it never saw appears), no trace of training's system prompt (the
    answer-format instruction training gave is left out), or an item evaluate() scored whose eval request does not
    show the item's own format_prompt text (a reworded question), so the eval measures a task the policy was not
    trained on."""
    train, evals, item = _rollouts(s)
    findings: list[Finding] = []
    train_tools = {_names(b) for b in train}
    eval_tools = {_names(b) for b in evals if _names(b)}
    if len(train_tools) == 1 and eval_tools and eval_tools != train_tools:
        trained = next(iter(train_tools))
        other = next(t for t in eval_tools if t != trained)
        missing = sorted(set(trained) - set(other))
        extra = sorted(set(other) - set(trained))
        what = "; ".join(
            part
            for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"extra {', '.join(extra)}" if extra else "",
            )
            if part
        )
        stable = _tools_stable(s)
        findings.append(
            Finding(
                "HC709",
                f"evaluate() should offer the tools a training rollout is offered; training offered "
                f"[{', '.join(trained)}], an eval rollout [{', '.join(other)}] ({what})."
                + (
                    ""
                    if stable
                    else " The env's tools differ from group to group (a toolset distribution?), so this may "
                    "be a draw."
                ),
                "resolve the tools in evaluate() as training does (`tools, names = "
                "self._resolve_tools_for_group()` and pass them to the agent loop), not a list of its own.",
                Severity.ERROR if stable else Severity.WARNING,
                subject=f"training vs evaluate() (item {_clip(item)})",
            )
        )
    findings += _rejected_tools(s)
    findings += _system_parity(train, evals)
    findings += _prompt_parity(s)
    return findings


_UNKNOWN_TOOL = re.compile(r"Unknown tool '([^']+)'")


def _rejected(requests: Iterable[Any]) -> set[str]:
    """Tools a request offered whose call the rollout answered "Unknown tool" (the loop's valid names leave them
    out: offered to the model, refused when it calls them)."""
    out: set[str] = set()
    for call in requests:
        body = getattr(call, "body", None) or {}
        offered = set(offered_tool_names(body))
        for message in body.get("messages") or []:
            content = message.get("content")
            if message.get("role") == "tool" and isinstance(content, str):
                out.update(n for n in _UNKNOWN_TOOL.findall(content) if n in offered)
    return out


def _rejected_tools(s: EnvSession) -> list[Finding]:
    """An eval rollout refusing, as an unknown tool, a tool its own request offers and training runs."""
    from hermes_envs.conformance._observations.evaluation import EvalObservation
    from hermes_envs.conformance._observations.group import CollectedGroup

    refused = sorted(
        _rejected(s.observe(EvalObservation).requests) - _rejected(s.observe(CollectedGroup).requests)
    )
    if not refused:
        return []
    return [
        Finding(
            "HC709",
            f"evaluate() should run the tools it offers, as training does; eval requests offer "
            f"{', '.join(refused)}, and when the model called {'it' if len(refused) == 1 else 'them'} the eval "
            'rollout answered "Unknown tool" while training ran the same call: the agent loop evaluate() builds '
            "gets other valid_tool_names than the tools it offers (toolset names instead of tool names, or a "
            "stale list), so every eval rollout that needs those tools fails.",
            "pass the names that come with the tools: `tools, names = self._resolve_tools_for_group()` and "
            "`HermesAgentLoop(..., tool_schemas=tools, valid_tool_names=names)` in evaluate().",
            subject="eval tools vs the names the eval loop accepts",
        )
    ]


def _count(bodies: list[dict[str, Any]], system: str) -> int:
    return sum(1 for b in bodies if _system(b) == system)


def _said(body: dict[str, Any]) -> str:
    """Every text the request shows the model (all messages, or the raw prompt), whitespace normalised."""
    texts = [m.get("content") for m in body.get("messages") or []]
    texts.append(body.get("prompt"))
    return " ".join(" ".join(t.split()) for t in texts if isinstance(t, str))


def _system_parity(train: list[dict[str, Any]], evals: list[dict[str, Any]]) -> list[Finding]:
    """Training's (one) system prompt nowhere in any eval request: the instruction the policy was trained with
    (an answer format, the tools' use) is missing in eval. Upstream's own envs pass it to eval too."""
    train_systems = {_system(b) for b in train}
    if len(train_systems) != 1:
        return []
    trained = " ".join(next(iter(train_systems)).split())
    if not trained or any(trained in _said(b) for b in evals):
        return []
    return [
        Finding(
            "HC709",
            f"evaluate() should tell the model what training tells it; every training rollout's request has the "
            f"system prompt {_clip(trained)}, and none of the {len(evals)} eval rollout(s) shows it (neither as a "
            "system message nor inside the user message), so the eval prompt differs from training: the "
            "instruction the policy was trained with (an answer format, how to use the tools) is missing and eval "
            "under-reports the trained policy.",
            "build eval messages as training does: `messages = self.initial_messages(item)` (system prompt and "
            "user prompt), not a bare user message. If eval is meant to run zero-shot without it, silence HC709 "
            'with conformance_ignore = {"HC709": "why"}.',
            subject="the system prompt, training vs evaluate()",
        )
    ]


#: How many of the items evaluate() scored HC709 compares with their training prompt.
PARITY_ITEMS = 8


def _prompt_parity(s: EnvSession) -> list[Finding]:
    """The same item seen both ways: evaluate() scored item X, so a training rollout of X would be told
    ``format_prompt(X)``; no eval request showing that text (for an item whose prompt is stable) is an eval that
    asks its own, reworded question."""
    import difflib

    from hermes_envs.conformance._observations.evaluation import EvalObservation
    from hermes_envs.conformance._observations.scoring import item_key
    from hermes_envs.env._prompt import format_prompt_of

    observed = s.observe(EvalObservation)
    bodies = [b for b in (getattr(c, "body", None) or {} for c in observed.requests) if b]
    shown = [_said(b) for b in bodies]
    users = [u for u in dict.fromkeys(_user(b) for b in bodies) if u]
    env = s.env()
    seen: set[str] = set()
    differing: list[tuple[Any, str]] = []
    for item, prompt in zip(observed.scored_items, observed.scored_prompts):
        key = item_key(item)
        if key in seen or len(seen) >= PARITY_ITEMS or prompt is None or not prompt.strip():
            continue  # (None: not an item format_prompt takes, e.g. an eval record of its own)
        seen.add(key)
        try:
            first, again = format_prompt_of(env, item), format_prompt_of(env, item)
        except Exception:
            continue
        if first != again:
            continue  # a random template is HC710's business
        flat = " ".join(prompt.split())
        if not any(flat in text for text in shown):
            differing.append((item, prompt))
    if not differing or not users:
        return []
    item, prompt = differing[0]
    closest = max(users, key=lambda u: difflib.SequenceMatcher(None, prompt, u).ratio())
    missing = [line.strip() for line in prompt.splitlines() if line.strip() and line.strip() not in closest]
    lost = (
        f"; lines of the training prompt missing from it: {_clip(' / '.join(missing), 200)}"
        if missing
        else ""
    )
    return [
        Finding(
            "HC709",
            f"evaluate() should ask the model about an item what a training rollout of that item asks; for "
            f"{len(differing)} of the {len(seen)} item(s) evaluate() scored, no eval request shows the item's "
            f"format_prompt text. For item {_clip(item)} training would send {_clip(prompt, 200)}, while the "
            f"closest eval prompt is {_clip(closest, 200)}{lost}. The eval prompt differs from training (reworded "
            "or built by hand), so eval measures another task than the one trained.",
            "build the eval user message with `self.format_prompt(item)` (or `self.initial_messages(item)`), the "
            "same call training uses; add eval-only text around it, never instead of it.",
            subject=f"item {_clip(item)}, training vs evaluate()",
        )
    ]


def _tools_stable(s: EnvSession) -> bool:
    """True when resolving the env's tools twice gives the same names (no per-group random toolsets)."""
    try:
        first = tuple(sorted(s.tools()[1]))
        second = tuple(sorted(s.tools()[1]))
    except BaseException:
        return False
    return first == second


@check(
    "HC710",
    "prompt-stable",
    "format_prompt gives the same text for one item every time",
    severity=Severity.WARNING,
    requires=("HC301",),
    why=(
        "A prompt that changes between calls makes one item a different task in every rollout of a group and "
        "in every eval, so its scores are not comparable."
    ),
    fix=(
        "Seed prompt randomness from the item, or draw it once in setup(); silence HC710 if it is a deliberate "
        "augmentation."
    ),
)
def prompt_stable(s: EnvSession) -> list[Finding]:
    """A format_prompt that draws its wording, examples or order afresh on every call: the same item is a
    different task in every rollout of a group and in every eval, so scores of one item are not comparable (a
    warning: random templates can be a deliberate augmentation)."""
    from hermes_envs.conformance._observations.rollouts import probe_items
    from hermes_envs.env._prompt import format_prompt_of

    if not s.is_hermes_env():
        raise NotApplicable("the env has no format_prompt (a raw atroposlib env)")
    env = s.env()
    for item in probe_items(s):
        first = format_prompt_of(env, item)
        second = next(
            (p for p in (format_prompt_of(env, item) for _ in range(PROMPT_CALLS)) if p != first), first
        )
        if isinstance(first, str) and isinstance(second, str) and first != second:
            at = next(
                (i for i, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second))
            )
            return [
                Finding(
                    "HC710",
                    f"format_prompt(item) should give the same text for the same item; called again it gave "
                    f"{_clip(first[max(0, at - 30) :])} and then {_clip(second[max(0, at - 30) :])} (they differ "
                    f"from character {at}).",
                    "seed any randomness in the prompt from the item (random.Random(item_id)), or draw it once "
                    "in setup(); if the variation is a deliberate augmentation, silence HC710.",
                    Severity.WARNING,
                    subject=f"item {_clip(item)}",
                )
            ]
    return []


def _clip(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 4] + "...'"


@check(
    "HC711",
    "eval-same-items",
    "evaluate() run again scores the same items (--thorough)",
    thorough=True,
    severity=Severity.WARNING,
    requires=("HC707",),
    why=(
        "The trainer compares evals across steps; evals over different items mix the items' difficulty into what "
        "looks like the policy's progress."
    ),
    fix="Evaluate the whole split, or a subset fixed once in setup() with a seeded random.",
)
def eval_same_items(s: EnvSession) -> list[Finding]:
    """An evaluate() that draws another subset or window of its eval items on every call: two points of the eval
    curve measure different items, so a change between them may be the items, not the policy (a warning: a
    random subsample per eval is sometimes a deliberate cost trade-off)."""
    from hermes_envs.conformance._observations.evaluation import EVAL_ANSWER, EvalObservation
    from hermes_envs.conformance._probes import call_each_tool_then

    first = s.observe(EvalObservation)
    if first.error or not first.requests:
        raise Skip("evaluate() did not run its items the first time (see HC202)")

    def items(bodies: list[dict[str, Any]]) -> set[str]:
        return {_user(b) for b in bodies if _user(b) and EVAL_ANSWER not in _user(b)}

    before = items(_first_requests(first.requests))
    after: set[str] = set()
    for _ in range(2):  # twice: HC707 ran evaluate() once in between, and a window may come round again
        with s.sandbox_leaks(), s.responding(call_each_tool_then(EVAL_ANSWER)) as made, s.scratch_cwd():
            try:
                s.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate-again")
            except Exception as exc:
                raise Skip(
                    f"evaluate() raised when run again ({type(exc).__name__}: {exc}; see HC707)"
                ) from None
        after = items(_first_requests(made))
        if after and after != before:
            break
    if not after or before == after:
        return []
    gone, new = sorted(before - after), sorted(after - before)
    example = new[0] if new else gone[0]
    return [
        Finding(
            "HC711",
            f"evaluate() should score the same items every time the trainer calls it; the first run asked about "
            f"{len(before)} item(s), a later one about {len(after)}, {len(new)} of them new and {len(gone)} left "
            f"out (e.g. {_clip(example)}).",
            "evaluate the whole eval split every time, or a subset fixed once in setup() (random.Random(seed)); "
            "if a fresh subsample per eval is deliberate, silence HC711.",
            Severity.WARNING,
            subject="evaluate() run twice",
        )
    ]


def _budget_requests(requests: Iterable[Any], quoted: tuple[str, ...]) -> list[dict[str, Any]]:
    """Bodies of the policy's requests: a judge's request quotes the fake model's answer in its user message."""
    out = []
    for call in requests:
        body = getattr(call, "body", None) or {}
        prompt = body.get("prompt")
        asked = _user(body) or (prompt if isinstance(prompt, str) else "")
        if body and not any(mark in asked for mark in quoted):
            out.append(body)
    return out


def _max_tokens(body: dict[str, Any]) -> int | None:
    value = body.get("max_tokens", body.get("max_completion_tokens"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _has_tool_result(body: dict[str, Any]) -> bool:
    return any(m.get("role") == "tool" for m in body.get("messages") or [])


@check(
    "HC712",
    "eval-budget-parity",
    "evaluate() gives the model at least the token and turn budget training gives",
    requires=("HC501", "HC202"),
    why=(
        "An eval that cuts replies or tool use off earlier than training (a smaller max_tokens, a turn limit of "
        "one) scores the trained policy on answers it was never allowed to finish: eval under-reports it."
    ),
    fix=(
        "Use training's budgets in evaluate(): the same max_tokens and `max_turns=self.config.max_agent_turns`; "
        "differ in temperature only."
    ),
)
def eval_budget_parity(s: EnvSession) -> list[Finding]:
    """evaluate() sampling with a smaller max_tokens than training, or stopping its rollouts before the tool
    results reach the model (a turn limit of one): a reply or a tool use the policy was trained to make is cut off
    in eval, so eval under-reports the trained policy."""
    from hermes_envs.conformance._observations.evaluation import EVAL_ANSWER, EvalObservation
    from hermes_envs.conformance._observations.group import CollectedGroup
    from hermes_envs.conformance.checks.trajectory import eval_only

    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    observed = s.observe(EvalObservation)
    if observed.error:
        raise Skip(f"evaluate() raised {observed.error} (see HC202)")
    quoted = (EVAL_ANSWER, "I think the answer is")
    train = _budget_requests(s.observe(CollectedGroup).requests, quoted)
    evals = _budget_requests(observed.requests, quoted)
    if not train or not evals:
        raise Skip("training or evaluate() made no model request of its own (see HC501 / HC202)")
    findings: list[Finding] = []
    trained = [t for t in (_max_tokens(b) for b in train) if t is not None]
    evaluated = [t for t in (_max_tokens(b) for b in evals) if t is not None]
    if trained and len(evaluated) == len(evals) and max(evaluated) < min(trained):
        findings.append(
            Finding(
                "HC712",
                f"evaluate() should let the model write as long a reply as training does; training requests ask "
                f"for max_tokens={min(trained)}, eval requests for max_tokens={max(evaluated)}, so a reply of "
                f"between {max(evaluated)} and {min(trained)} tokens that training completes is truncated in eval "
                "(cut off, and usually scored 0): the eval token budget is smaller and under-reports the policy.",
                "pass the same max_tokens in evaluate() as in training (e.g. both `self.config.max_token_length`); "
                "eval may differ in temperature, never in the room the answer has.",
                subject="max_tokens, training vs evaluate()",
            )
        )
    offered = [b for b in evals if offered_tool_names(b)]
    if (
        any(_has_tool_result(b) for b in train)
        and offered
        and len(offered) == len(evals)
        and not any(_has_tool_result(b) for b in evals)
    ):
        findings.append(
            Finding(
                "HC712",
                f"evaluate() should give its rollouts the turns training gives; the fake model called the offered "
                f"tools in both, and training sent the tool results back to the model for another turn, but none of "
                f"the {len(evals)} eval request(s) carries a tool result: every eval rollout is cut off after its "
                "first turn (max_turns=1, or a turn limit smaller than training's max_agent_turns), so a task the "
                "policy solves with tools in training cannot be solved in eval.",
                "run eval rollouts with the training turn limit: `max_turns=self.config.max_agent_turns` in the "
                "agent loop evaluate() builds.",
                subject="turn limit, training vs evaluate()",
            )
        )
    return findings
