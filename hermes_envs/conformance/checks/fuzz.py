"""HC412 — a search, not a list: hypothesis generates transcripts for the env's own items and tools and looks for
a reward that credits a reply with no correct answer, refuses one with the correct answer, raises or is slow.

Starts from a gold the kit proved (HC407): for that item, transcripts are drawn from the env's prompt, its tools
and word fillers; "without a correct answer" means none of the item's answer text (and, for a number, no digit at
all) appears anywhere in the transcript. Bounded by a count (``fuzz_examples``, with ``fuzz_seconds`` only as a safety cap) and reproducible (``fuzz_seed``); the
smallest counterexample hypothesis finds is the finding.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hermes_envs._chat import assistant_turns
from hermes_envs.conformance._cases import Case, case_json
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity
from hermes_envs.conformance._observations.origin import GoldOrigin
from hermes_envs.conformance._observations.scoring import GoldProbes, ScoredRollout
from hermes_envs.conformance._observations.scoring import numeric as _numeric
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

if TYPE_CHECKING:  # hypothesis is imported where the search runs
    from hypothesis.strategies import SearchStrategy

#: Words a filler is made of: reasoning chatter with no digit and no answer in it.
FILLER = (
    "let",
    "me",
    "think",
    "about",
    "this",
    "step",
    "carefully",
    "the",
    "result",
    "is",
    "done",
    "answer",
    "final",
    "so",
    "we",
    "get",
    "Answer:",
    "\\boxed{}",
    "<answer></answer>",
    "####",
    "**",
    "I",
    "believe",
    "yes",
    "no",
    "maybe",
    "unknown",
)
#: Format words: in a reply WITHOUT the answer they must earn nothing; they are kept out of the words placed
#: before a correct answer ("Answer: so 42" is not the answer line a strict reward parses).
ANSWER_MARKERS = ("answer", "final", "Answer:", "\\boxed{}", "<answer></answer>", "####", "**")
#: A reward taking longer than this on one transcript is reported (a warning).
SLOW_SECONDS = 10.0  # far above a loaded machine's jitter: a wall-clock limit must never flake


def _transcripts(
    prompt_messages: list[dict[str, Any]], tools: list[str], answer: str | None, prefix: bool = True
) -> SearchStrategy[list[dict[str, Any]]]:
    """A hypothesis strategy of message lists: the prompt, 0-2 tool turns, then a final reply (filler, or filler
    around ``answer`` when it is given; with ``prefix=False`` the reply is ``answer`` itself, up to punctuation)."""
    from hypothesis import strategies as st

    words = FILLER if answer is None else tuple(w for w in FILLER if w not in ANSWER_MARKERS)
    # At least one word: an empty reply is already a fixed control (HC406); the search spends its budget elsewhere.
    filler = st.lists(st.sampled_from(words), min_size=1, max_size=8).map(" ".join)
    before = filler if prefix else st.just("")
    call = st.tuples(st.sampled_from(tools), filler) if tools else st.nothing()
    turns = st.lists(call, max_size=2 if tools else 0)
    final = (
        st.tuples(before, st.sampled_from(["", ".", "\n", " "])).map(
            lambda p: f"{p[0]} {answer}{p[1]}".strip()
        )
        if answer is not None
        else st.one_of(st.none(), filler)
    )

    def build(parts: tuple[list[tuple[str, str]], str | None]) -> list[dict[str, Any]]:
        calls, reply = parts
        messages = list(prompt_messages)
        for index, (name, output) in enumerate(calls):
            call_id = f"call_{index}"
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
        if reply is not None:
            messages.append({"role": "assistant", "content": reply})
        return messages

    return st.tuples(turns, final).map(build)


def _free_of(
    messages: list[dict[str, Any]], prompt_count: int, forbidden: list[str], no_digits: bool
) -> bool:
    for message in messages[prompt_count:]:
        text = str(message.get("content") or "")
        low = text.lower()
        if any(f.lower() in low for f in forbidden if f) or (no_digits and any(c.isdigit() for c in text)):
            return False
    return True


#: The search looks for mistakes nobody listed: when a listed check already failed on the reward, HC412 is
#: skipped naming it (one cause, one finding).
_LISTED = (*SCORE_PREREQUISITES, "HC404", "HC406", "HC407", "HC410", "HC411")


@check(
    "HC412",
    "reward-fuzz",
    "a hypothesis search finds no transcript the reward misjudges",
    requires=_LISTED,
    why=(
        "A fixed list of probes catches the mistakes someone listed; a search over transcripts built from the "
        "env's own items and tools finds the rest: credit for format words, refusals of a correct answer, crashes."
    ),
    fix="Credit only the answer itself, read from the last assistant message; see the smallest counterexample.",
)
def reward_fuzz(s: EnvSession) -> list[Finding]:
    """Rewards that a fixed list of probes does not trip: a transcript with no correct answer in it that scores as
    well as the correct one (an error: the reward credits something else), a transcript holding the correct
    answer that scores below it, a transcript on which the reward raises or takes seconds (warnings)."""
    from hermes_envs.agent.result import AgentResult
    from hermes_envs.conformance._golds import scalar_fields
    from hermes_envs.tools import ToolContext, cleanup_sandbox

    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    golds = [g for g in s.observe(GoldProbes).gold if g.origin.template and _numeric(g.score)]
    if not golds:
        raise NotApplicable(
            "no gold answer was proven for the probe items, so nothing to search around (HC407)"
        )
    env = s.env()
    schemas, _names = s.tools()
    tools = [t.get("function", t).get("name", "") for t in schemas][:4]
    budget = s.settings.fuzz_seconds
    deadline = time.perf_counter() + budget
    per_gold = budget / len(golds)
    findings: list[Finding] = []
    calls = 0

    def score(item: Any, messages: list[dict[str, Any]]) -> tuple[Any, float, str | None]:
        nonlocal calls
        calls += 1
        ctx = ToolContext(f"fuzz-{calls}")
        start = time.perf_counter()
        try:
            last = messages[-1] if messages else {}
            result = AgentResult(
                messages=messages,
                turns_used=assistant_turns(messages),
                finished_naturally=last.get("role") == "assistant" and not last.get("tool_calls"),
            )
            value = s.run_env(lambda _env: env.compute_reward(item, result, ctx), phase="fuzz")
            return value, time.perf_counter() - start, None
        except Exception as exc:
            return None, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"
        finally:
            ctx.cleanup()
            cleanup_sandbox(ctx.task_id)

    for gold in golds:
        item, best = gold.item, float(gold.score)
        prompt = [m for m in gold.result.messages if m.get("role") in ("system", "user")][:2]
        answer, value = gold.origin.answer, gold.origin.value or ""  # (a gold with a template has its value)
        forbidden = [value, *(v for _k, v in scalar_fields(item) if len(v) >= 2)]
        numeric = any(c.isdigit() for c in value)
        calibration, _seconds, _error = score(item, [dict(m) for m in gold.result.messages])
        if not (_numeric(calibration) and abs(float(calibration) - best) <= 1e-9):
            continue  # the reward needs more than the transcript (state from the rollout): a search would mislead
        stop_at = min(deadline, time.perf_counter() + per_gold)
        prefix = gold.origin.template != "{v}" or _reads_inside_text(score, item, prompt, value, best)
        for mode in ("without", "with"):
            seen = _search(
                s,
                # A gold proven only as the bare reply ("silent") may be all the task accepts ("reply with the
                # word only"): words before it ("let silent") make another answer, so none are added there.
                _transcripts(prompt, tools, answer if mode == "with" else None, prefix=prefix),
                _Judge(
                    score,
                    item,
                    best,
                    mode,
                    len(prompt),
                    forbidden,
                    numeric,
                    stop_at,
                    s.settings.control_ceiling,
                ),
            )
            if "last" in seen:
                finding = _finding(s, seen["last"], item, gold, best, mode)
                if finding.severity is Severity.ERROR and not _gold_stands(s, gold):
                    finding = _as_warning(finding, _why_unconfirmed(s, gold))
                findings.append(finding)
                break
        if findings or time.perf_counter() > deadline:
            break
    return findings


def _reads_inside_text(score: Any, item: Any, prompt: list[dict[str, Any]], value: str, best: float) -> bool:
    """Whether the reward finds a bare-proven gold inside a sentence ("The answer is silent."): if not, the task
    wants the reply to be the answer alone, and words before it are another answer, not a rendering of it."""
    got, _seconds, error = score(item, [*prompt, {"role": "assistant", "content": f"The answer is {value}."}])
    return error is None and _numeric(got) and got >= best - 1e-9


class _Judge:
    """One search's property: score a generated transcript and say what (if anything) is wrong with the score."""

    def __init__(
        self,
        score: Any,
        item: Any,
        best: float,
        mode: str,
        prompt_count: int,
        forbidden: list[str],
        numeric: bool,
        stop_at: float,
        ceiling: float,
    ) -> None:
        self.score, self.item, self.best, self.mode = score, item, best, mode
        self.prompt_count, self.forbidden, self.numeric = prompt_count, forbidden, numeric
        self.stop_at, self.ceiling = stop_at, ceiling
        self.seen: dict[str, Any] = {}
        self.tried = 0

    def __call__(self, messages: list[dict[str, Any]]) -> None:
        if time.perf_counter() > self.stop_at:
            return
        if self.mode == "without" and not _free_of(messages, self.prompt_count, self.forbidden, self.numeric):
            return
        self.tried += 1
        value, seconds, error = self.score(self.item, messages)
        problem = None
        if error is not None:
            problem = ("raises", error)
        elif seconds > SLOW_SECONDS:
            problem = ("slow", f"{seconds:.1f} s")
        elif _numeric(value) and self.mode == "without" and value >= self.best and self.best > self.ceiling:
            problem = ("credits", value)
        elif _numeric(value) and self.mode == "with" and value < self.best - 1e-9:
            problem = ("refuses", value)
        if problem is not None:
            self.seen["last"] = (problem, messages)  # hypothesis replays the shrunk example last
            raise AssertionError(problem)


def _search(s: EnvSession, strategy: SearchStrategy[list[dict[str, Any]]], judge: _Judge) -> dict[str, Any]:
    """Run one hypothesis search of ``judge`` over ``strategy``; returns what it found (``last``)."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    def transcript_is_judged_right(messages: list[dict[str, Any]]) -> None:
        judge(messages)

    search = seed(s.settings.fuzz_seed)(
        settings(
            max_examples=s.settings.fuzz_examples * (5 if s.settings.thorough else 1),
            deadline=None,
            database=None,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
        )(given(strategy)(transcript_is_judged_right))
    )
    try:
        with _without_local_constants():
            search()
    except AssertionError:
        pass
    except Exception as exc:  # hypothesis itself gave up (flaky): nothing found, never a crash of the check
        judge.seen.setdefault("internal", f"{type(exc).__name__}: {exc}")
    return judge.seen


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Within the block, hypothesis draws no constants harvested from the source of "local" modules.

    Left on, the search's first draw parses every loaded module outside site-packages (hermes-envs from a checkout,
    the user's project: ~0.4 s), writes a cache of them into ``.hypothesis/`` in the user's current folder, and
    lets the examples a seed gives depend on which modules happen to be loaded. The strategies here sample fixed
    word lists and tool names, so those constants only added noise; with them off ``fuzz_seed`` alone fixes the
    search. Hypothesis has no setting for this, so its module-level hook is swapped (and left alone when a
    version lacks it); its cache of drawn constants is cleared on both sides, so a test of the user's that runs
    hypothesis later in the same process gets its own constants back.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        saved, cache = providers._get_local_constants, providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError):  # pragma: no cover - another hypothesis version
        yield
        return
    empty = Constants()
    cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = saved
        cache.clear()


def _finding(
    s: EnvSession, found: Any, item: Any, gold: ScoredRollout[GoldOrigin], best: float, mode: str
) -> Finding:
    (kind, detail), messages = found
    shown = [
        {k: v for k, v in m.items() if k in ("role", "content") or (k == "tool_calls" and v)}
        for m in messages
        if m.get("role") not in ("system", "user")
    ]
    transcript = short(shown, 400)
    seed = s.settings.fuzz_seed
    where = f"on item {short(item, 90)} (hypothesis seed {seed}; smallest example found)"
    if kind == "credits":
        correct = [m for m in gold.result.messages if m.get("role") in ("system", "user")] + [
            {"role": "assistant", "content": gold.origin.answer}
        ]
        case = Case(
            rule="a transcript without the correct answer scores below the correct answer",
            item=item,
            scripts={"correct answer": correct, "no answer": [dict(m) for m in messages]},
            order=("correct answer", "no answer"),
            holds=(
                ("no answer", ">=", "correct answer"),
                ("correct answer", ">", s.settings.control_ceiling),
            ),
        )
        return Finding(
            "HC412",
            f"a transcript without a correct answer should score below a correct one; this one holds no "
            f"{gold.origin.value!r} (nor any digit, for a numeric answer) and scored {detail:g}, as much as the correct "
            f"answer ({best:g}), {where}: {transcript}.",
            "credit only the answer itself: parse it from the last assistant message and compare it with the "
            "item's answer; give nothing for format words, tool calls or length.",
            subject="fuzz: no answer, full credit",
            counterexample=case_json(case),
        )
    if kind == "refuses":
        rendered = gold.origin.answer
        about = (
            f"a transcript ending on the correct answer {rendered!r} should score as the correct answer does "
            f"({best:g}); this one scored {detail:g}"
        )
    elif kind == "raises":
        about = f"compute_reward should score any transcript; on this one it raised {detail}"
    else:
        about = f"compute_reward should score a transcript quickly; this one took {detail}"
    return Finding(
        "HC412",
        f"{about}, {where}: {transcript}.",
        "read the final answer from the last assistant message with content and normalise it before comparing; "
        "if this transcript is not one your task can produce, ignore HC412 (a warning).",
        Severity.WARNING,
        subject=f"fuzz: {kind}",
    )


def _gold_stands(s: EnvSession, gold: ScoredRollout[GoldOrigin]) -> bool:
    """Whether "a transcript without the gold scored as well" is a counterexample to a rule every correct env
    obeys: the env itself confirmed the gold (another value in the same shape scores lower) and scored it with no
    judge (a reward that asks a model scores what the kit's fake model says, not what the env decides)."""
    return s.observe(GoldProbes).confirmed(gold) and not _judged(s)


def _judged(s: EnvSession) -> bool:
    from hermes_envs.conformance._observations.scoring import ScoredProbes

    return any(e.model_requests for e in s.observe(ScoredProbes).rollouts)


def _why_unconfirmed(s: EnvSession, gold: ScoredRollout[GoldOrigin]) -> str:
    if _judged(s):
        return "the reward asks a model (a judge), and here that model is the kit's fake, so its verdict is no evidence"
    return (
        f"the env did not confirm that {gold.origin.value!r} is the answer (the same shape with another value scored as "
        "well), so the kit's guess of the answer may be wrong"
    )


def _as_warning(finding: Finding, why: str) -> Finding:
    from dataclasses import replace

    return replace(finding, message=finding.message[:-1] + f" (a warning: {why}).", severity=Severity.WARNING)
