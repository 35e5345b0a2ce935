"""HC507 — replies cut off by the token limit: a raw atroposlib env's group scored with every completion's
finish_reason "length", against the same completions finished ("stop").

A completion that hit max_tokens is unfinished: its answer may be half-written and the rest never came. Scoring it
exactly like the finished one rewards whatever the cut left, and a policy trained on that learns to run into
max_tokens. Many upstream envs ignore finish_reason, so this is a warning; an error only when the env's own
evaluate() reports the same cut-off completions differently (the env holds the rule and training breaks it).
"""

from __future__ import annotations

import re
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._golds import gold_answers
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._observations.scoring import numeric
from hermes_envs.conformance._probes import Responder
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession

#: A tag the prompt shows an answer in (``answer <rating>N</rating>``): the kit's candidate answers use it too.
_TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})>[^<>\n]{0,40}</\1>")
#: How many candidate answers are tried for a group whose completions score differently.
TRIES = 8


def _candidates(item: Any, body: dict[str, Any]) -> list[str]:
    """Answers that may earn credit: each of the item's field values in every tag the request's messages show
    an answer in (numbers first), then in the common answer shapes."""
    texts = " ".join(
        str(m["content"])
        for m in body.get("messages") or []
        if isinstance(m, dict) and isinstance(m.get("content"), str)
    ) + str(body.get("prompt") or "")
    tags = list(dict.fromkeys(_TAG.findall(texts)))
    values = list(dict.fromkeys(v for _f, v, _a in gold_answers(item) if 0 < len(v) <= 200))
    values.sort(key=lambda v: not v.strip().lstrip("-").replace(".", "", 1).isdigit())
    tagged = [f"<{tag}>{v}</{tag}>" for v in values for tag in tags]
    return tagged + [a for _f, _v, a in gold_answers(item)]


def _finishing(item: Any, offset: int, reason: str | None) -> Responder:
    """The group's first completion is the ``offset``-th candidate answer, the others wrong ones; each choice ends
    with ``reason`` (None: the server's usual 'stop')."""
    counter = iter(range(1_000_000))

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        candidates = _candidates(item, body)
        choices = []
        for _ in range(max(1, int(body.get("n") or 1))):
            i = next(counter)
            text = (
                candidates[offset % len(candidates)] if i == 0 and candidates else f"I think it is {i + 7}."
            )
            choices.append(
                {"content": text} if reason is None else {"content": text, "finish_reason": reason}
            )
        return {"choices": choices}

    return respond


def _scores(
    s: EnvSession, item: Any, responder: Responder, phase: str
) -> tuple[list[Any] | None, str | None]:
    """The scores of ``collect_trajectories(item)``'s first group (None when it returned no group) and what it
    raised."""
    with s.sandbox_leaks(), s.responding(responder):
        try:
            group, _backlog = s.run_env(lambda e: e.collect_trajectories(item), timeout=120, phase=phase)
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"
    groups = group if isinstance(group, list) else [group]
    first = next((g for g in groups if isinstance(g, dict) and g.get("scores")), None)
    return (list(first["scores"]) if first else None), None


@check(
    "HC507",
    "cut-off-scored",
    "a raw env does not score completions cut off by the token limit like finished ones",
    requires=("HC201",),
    why=(
        "A completion that hit max_tokens is unfinished; scored like a finished one, the policy learns that running "
        "into the limit costs nothing, and half-written answers are trained on as if complete."
    ),
    fix="Read choice.finish_reason and score a 'length' completion 0 (or drop it); pass it to tokenize_for_trainer.",
)
def cut_off_scored(s: EnvSession) -> list[Finding]:
    """A raw atroposlib env that never reads ``choice.finish_reason``: a completion that hit max_tokens (finish
    reason "length", the answer possibly half-written) earns what a finished one earns, and the policy learns that
    running into the limit costs nothing. Seen as one group scored twice, the same completions finished and cut off."""
    from hermes_envs.conformance.checks.trajectory import eval_only

    if s.is_hermes_env():
        raise NotApplicable(
            "an agent env's reward sees an AgentResult (upstream's has no finish_reason); the loop reports a cut-off "
            "last turn as result.termination == 'length'"
        )
    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    item = probe_items(s)[0]
    finished: list[Any] | None = None
    error: str | None = None
    for offset in range(TRIES):
        finished, error = _scores(s, item, _finishing(item, offset, None), "cutoff-finished")
        if error is not None or not finished or len({repr(x) for x in finished}) > 1:
            break
    if error is not None or not finished:
        raise Skip(
            f"collect_trajectories(item) gave no scored group with finished completions ({error or 'None'})"
        )
    if len({repr(x) for x in finished}) < 2:
        raise Skip(
            f"no group of finished completions scored differently ({TRIES} answers tried; all {finished[0]!r}): "
            "nothing to compare"
        )
    cut, error = _scores(s, item, _finishing(item, offset, "length"), "cutoff-length")
    # Compared as multisets: the group's rollouts run concurrently, so which one got which completion (and the order
    # of the scores) depends on timing; a CI run once read [0.0, 1.0] vs [1.0, 0.0] as "scored differently".
    if error is not None or cut is None or sorted(map(repr, cut)) != sorted(map(repr, finished)):
        return []  # raised, dropped the group, or scored the cut-off completions differently: it noticed
    base = (
        f"collect_trajectories should not score a completion cut off by the token limit (finish_reason 'length', "
        f"max_tokens reached, the answer possibly truncated) like a finished one; the same {len(cut)} completions "
        f"scored {_clip(finished)} when finished ('stop') and exactly the same when every one was cut off"
    )
    fix = (
        "read choice.finish_reason and score a 'length' completion 0 (or drop it), as atroposlib's own examples do "
        "for replies that never finished; pass finish_reason to tokenize_for_trainer too."
    )
    subject = f"item {_clip(item, 80)}"
    evaluated = _eval_reads_cut_off(s, item, offset)
    if evaluated:
        # The env's own evaluate() treats a cut-off completion as a different outcome: its author holds the rule,
        # and training breaks it. A contradiction inside the env, not the kit's guess.
        return [
            Finding(
                "HC507",
                f"{base}, although the env's own evaluate() scores the same cut-off completions lower ({evaluated}): "
                "training pays truncated replies that its eval counts as failures, so the policy learns to run into "
                "max_tokens.",
                fix,
                subject=subject,
            )
        ]
    return [
        Finding(
            "HC507",
            f"{base} (a warning: many upstream envs ignore finish_reason, but the policy then learns that running "
            "into max_tokens costs nothing).",
            fix,
            Severity.WARNING,
            subject=subject,
        )
    ]


def _eval_reads_cut_off(s: EnvSession, item: Any, offset: int) -> str:
    """Which eval metrics fall when every completion (the candidate answer that earned credit in training) is cut
    off rather than finished; ``""`` when none does, or evaluate() cannot tell (it raised, asked the model
    nothing)."""
    from hermes_envs.conformance.checks.faults import describe_eval_run, eval_run

    def answering(reason: str | None) -> Responder:
        def respond(body: dict[str, Any]) -> dict[str, Any]:
            candidates = _candidates(item, body)
            text = candidates[offset % len(candidates)] if candidates else "I don't know."
            turn = {"content": text} if reason is None else {"content": text, "finish_reason": reason}
            return {"choices": [dict(turn) for _ in range(max(1, int(body.get("n") or 1)))]}

        return respond

    finished = eval_run(s, answering(None), "cutoff-eval-finished")
    if finished.error is not None or not finished.requests:
        return ""
    cut = eval_run(s, answering("length"), "cutoff-eval-length")
    if cut.error is not None or not cut.requests or cut.report() == finished.report():
        return ""
    fell = _fallen(finished.metrics, cut.metrics)
    if not fell:
        return ""  # only another number moved (a truncation count it monitors): no score it gives was lowered
    return (
        f"{', '.join(fell[:3])}; finished: {describe_eval_run(finished)}; cut off: {describe_eval_run(cut)}"
    )


def _fallen(finished: tuple[Any, ...], cut: tuple[Any, ...]) -> list[str]:
    """The metrics of the last evaluate_log call that are lower when the completions were cut off."""
    if not finished or not cut or not isinstance(finished[-1], dict) or not isinstance(cut[-1], dict):
        return []
    out = []
    for key, before in finished[-1].items():
        after = cut[-1].get(key)
        if numeric(before) and numeric(after) and float(after) < float(before) - 1e-9:
            out.append(f"{key} {float(before):g} -> {float(after):g}")
    return out


def _clip(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
