"""HC413's cost relation: compute_reward on hostile replies (long digit runs, nested markup, open tags) must spend
bounded CPU, measured on the loop thread (which a loaded machine does not inflate) and re-measured before it counts.
"""

from __future__ import annotations

import time
from typing import Any

from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.conformance._observations.origin import CheckOrigin
from hermes_envs.conformance._observations.rollouts import run_probe
from hermes_envs.conformance._observations.scoring import score_rollout
from hermes_envs.conformance._probes import say
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

__all__ = ["COST_CPU_SECONDS", "HOSTILE_REPLIES", "cost_relation"]

#: CPU seconds (the loop thread's own, which a loaded machine does not inflate) one compute_reward call may spend
#: on a hostile reply before it is re-measured; twice over, and still over on half the reply, is an error.
COST_CPU_SECONDS = 5.0
#: Replies that make a careless parser backtrack or recurse: long digit runs, nested markup, open tags. Each is
#: (what, repeated unit, count, tail), so the same reply can be built at half its size.
HOSTILE_REPLIES = (
    ("a {n:,}-digit run", "1", 30_000, "!"),
    ("{n:,} nested \\boxed{{", "\\boxed{", 3_000, ""),
    ("{n:,} open <answer> tags", "<answer>", 5_000, ""),
)


def _scoring_cpu(s: EnvSession, item: Any, text: str) -> float:
    """CPU seconds the loop thread spends in compute_reward on one reply ``text``."""
    result, task_id = run_probe(s, item, say(text), 2, "hostile", "cases")
    start = time.thread_time()
    score_rollout(s, item, result, task_id, CheckOrigin("a hostile reply"), "cases")
    return time.thread_time() - start


def cost_relation(s: EnvSession, item: Any) -> Finding | None:
    """compute_reward on hostile replies: CPU time measured on the loop thread, re-measured before it counts.

    Over the bound twice is an error only when half the reply is over it too: a blow-up (nested quantifiers,
    recursion) that no reply length makes safe. A cost that falls with the reply (a lazy ``<answer>(.*?)</answer>``
    rescanning the text from each open tag, as many correct envs write) is a warning: the env's token budget may
    keep replies short enough."""
    for what, unit, count, tail in HOSTILE_REPLIES:
        spent = [_scoring_cpu(s, item, unit * count + tail)]
        if spent[0] > COST_CPU_SECONDS:
            spent.append(_scoring_cpu(s, item, unit * count + tail))
        if min(spent) <= COST_CPU_SECONDS:
            continue
        half = _scoring_cpu(s, item, unit * (count // 2) + tail)
        blowup = half > COST_CPU_SECONDS
        return Finding(
            "HC413",
            f"compute_reward should score any reply in bounded time; on {what.format(n=count)} it spent "
            f"{spent[0]:.1f} s and {spent[1]:.1f} s of CPU (twice over {COST_CPU_SECONDS:g} s), and {half:.1f} s on "
            f"half that reply, on item {short(item, 90)}: a model that writes such a reply stalls every rollout"
            + (
                "."
                if blowup
                else " (a warning: the cost falls with the reply's length, so the env's token budget may keep "
                "real replies cheap enough)."
            ),
            "avoid nested quantifiers in regexes ((\\d+)*, (a+)+), cap the text you parse (e.g. the last 2,000 "
            "characters), and parse nesting with a loop, not recursion.",
            Severity.ERROR if blowup else Severity.WARNING,
            subject="relation: cost on a hostile reply",
        )
    return None
