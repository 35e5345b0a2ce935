"""Parity (HC709, HC710): the same task seen two ways must look the same to the model.

A training rollout and an evaluate() rollout are compared by the REQUESTS the fake model received (which tools it
was offered, what system prompt it was told); ``format_prompt`` is called twice for one item; evaluate() is run
twice. Differences a correct env has on purpose (eval at temperature 0, another turn budget, sampling settings) are
never compared. Only a difference no correct env makes is an error (the tools offered, when the env resolves the
same tools every time); the rest rests on a guess about the task and is a warning.
"""

from __future__ import annotations

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
    "evaluate() offers the model the tools (and, --thorough, the system prompt) training does",
    requires=("HC501", "HC701"),
)
def train_eval_parity(s: EnvSession) -> list[Finding]:
    """evaluate() building its own requests and drifting from training: other tools offered (a tool the policy
    learned to use is missing, or one it never saw appears), or another system prompt (the answer-format
    instruction training gave is left out), so the eval measures a task the policy was not trained on."""
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
    train_systems = {_system(b) for b in train}
    eval_systems = {_system(b) for b in evals}
    if len(train_systems) == 1 and s.settings.thorough:
        # Only under --thorough: a guess (zero-shot eval without the training prompt can be deliberate, and the
        # guide's own style builds eval messages without it), so a warning the default run does not spend on.
        trained_system = next(iter(train_systems))
        if trained_system and "" in eval_systems:
            findings.append(
                Finding(
                    "HC709",
                    f"evaluate() should tell the model what training tells it; a training rollout's request "
                    f"has the system prompt {_clip(trained_system)}, {_count(evals, '')} of {len(evals)} eval "
                    "rollout(s) have none, so an instruction the policy was trained with (an answer format, the "
                    "tools' use) is missing in eval.",
                    "build eval messages as training does: `messages = self.initial_messages(item)` (system "
                    "prompt and user prompt), not a bare user message. If eval is meant to run without it, "
                    'silence HC709 with conformance_ignore = {"HC709": "why"}.',
                    # A guess: an env may evaluate zero-shot without the training prompt on purpose.
                    Severity.WARNING,
                    subject="a training rollout vs the eval rollouts",
                )
            )
    return findings


def _count(bodies: list[dict[str, Any]], system: str) -> int:
    return sum(1 for b in bodies if _system(b) == system)


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
