"""HC2xx — data: setup works offline, training and eval items exist and do not overlap, the items cycle."""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Sequence
from typing import Any

from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._observations.training import (
    MAX_ITEMS_SCANNED,
    STUCK_CALLS,
    SetupRun,
    TrainingScan,
)
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.env._prompt import format_prompt_of


def _describe_exception(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = next(
        (
            f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"
            for f in reversed(frames)
            if "site-packages" not in f.filename
        ),
        "",
    )
    return f"{type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")


@check(
    "HC201",
    "setup-offline",
    "setup() works offline",
    requires=("HC103",),
    why="setup() runs on every trainer start; if it needs the network, offline nodes and CI crash.",
    fix=(
        "Wrap downloads in try/except with a built-in sample (or ship the data). To judge the rest offline "
        "meanwhile, pass `--items FILE.jsonl` (stand-in items) or point the env at local data with "
        "`--env.dataset_name ...`."
    ),
)
def setup_offline(s: EnvSession) -> list[Finding]:
    """``setup()`` that needs the network or the Hub (so CI and air-gapped trainers crash), or that raises."""
    try:
        s.observe(SetupRun)
    except Exception as exc:
        text = _describe_exception(exc)
        blocked = (
            "NetworkBlocked" in type(exc).__name__
            or "offline" in str(exc).lower()
            or "hub" in str(exc).lower()
        )
        fix = (
            "wrap the download in try/except and fall back to built-in samples (as the guide's setup() does), "
            "or ship the data with the env."
            if blocked
            else "make setup() succeed with no network and no API key; load data with a built-in fallback."
        )
        found = s.stand_ins()
        fix += (
            f" Meanwhile the checks that need items ran on stand-in items from {found.source}."
            if found is not None
            else " To judge the rest of the env offline meanwhile, pass items with `--items FILE.jsonl` "
            f"(`--hermes-items` under pytest; one JSON object a line{_keys_hint(s)}), or point the env at local "
            "data with `--env.FIELD VALUE` (e.g. --env.dataset_name data/train.jsonl) if setup() reads it from its "
            "config."
        )
        return [Finding("HC201", f"setup() should complete offline; it raised {text}.", fix)]
    return []


@check(
    "HC202",
    "train-eval-split",
    "train and eval items both exist and are disjoint",
    requires=("HC201", "HC301"),
    why="Without a held-out eval split, eval numbers measure memorisation; with an empty one, nothing.",
    fix="Split once in setup() and evaluate only on the held-out part.",
)
def train_eval_split(s: EnvSession) -> list[Finding]:
    """No train/eval split: an empty eval set, no training items, or eval prompts that are also training prompts."""
    s.env()  # constructs the env (its construction errors belong here, not to a later check)
    training = s.observe(TrainingScan)
    findings = []
    declared = _declared_eval_only(s, training) if not training.items else None
    if declared:
        findings.append(
            Finding(
                "HC202",
                f"get_next_item() raised {declared} in the env's own code: the env declares itself evaluation-only "
                "(a benchmark), a legitimate shape, so the checks that need training items are skipped and "
                "evaluate() is judged on its own.",
                "nothing, if the env is meant only for `evaluate`; if it should train too, return items from "
                "get_next_item().",
                Severity.WARNING,
            )
        )
    elif not training.items:
        # the env's own warnings (ours, such as a backend stand-in notice, are not the cause)
        logged = [r for r in s.observe(SetupRun).log if not r.split(" ", 2)[1].startswith("hermes_envs")]
        findings.append(
            Finding(
                "HC202",
                "get_next_item() should return training items; it returned none"
                + (f" and raised {training.error}" if training.error else "")
                + (f", and setup() logged {logged[0]!r}" if logged else "")
                + ".",
                "make the data setup() loads available (the logged line above names it)."
                if logged
                else "fill the training list in setup() and return items from it in get_next_item().",
            )
        )
    observed = s.observe(EvalObservation)
    asked = observed.prompts or observed.raw_prompts
    import_cause = _import_cause(s, observed.error) if observed.error else None
    if observed.error and not asked and import_cause is not None:
        cause, _, fix = import_cause.partition(" Fix: ")
        findings.append(
            Finding(
                "HC202",
                f"evaluate() should run offline; an import inside it failed ({observed.error}) before it asked the "
                f"model anything, so its eval split was never reached (an import problem, not a split problem): "
                f"{cause}",
                fix or "fix that import.",
            )
        )
    elif observed.error and not asked:
        findings.append(
            Finding(
                "HC202",
                f"evaluate() should run on the eval split offline; it raised "
                f"{observed.error} before asking the model anything.",
                "keep a held-out eval list from setup() and run the agent loop on it.",
            )
        )
    elif not asked and (observed.swallowed or observed.log_records):
        caught: Sequence[str] = observed.swallowed or []
        logs: Sequence[str] = observed.log_records or []
        cause = (
            f"it caught {caught[0]}" + (f" (and {len(caught) - 1} more)" if len(caught) > 1 else "")
            if caught
            else f"it logged {logs[0]!r}"
        )
        findings.append(
            Finding(
                "HC202",
                f"evaluate() should ask the model about each eval item; it made no model request, and {cause}, "
                "so the error, not an empty eval split, is why nothing was evaluated.",
                "fix the call that fails (the line above); let unexpected errors propagate out of evaluate() "
                "instead of logging and skipping every item.",
            )
        )
    elif not asked:
        findings.append(
            Finding(
                "HC202",
                "evaluate() should ask the model about each eval item; it made no model request at all, so the eval "
                "split is empty or evaluate() does nothing.",
                "split the data in setup() (e.g. eval_size = max(20, int(len(items) * 0.1))) and run the agent loop "
                "on every eval item in evaluate().",
            )
        )
    if training.items and asked and not _eval_only(s):
        # An eval-only env (upstream's benchmarks) never trains: get_next_item serves the eval items by design.
        findings += _overlap(s, training, observed)
    return findings


def _overlap(s: EnvSession, training: TrainingScan, observed: EvalObservation) -> list[Finding]:
    """Eval prompts that are training prompts. Identity is an error: the same text, or the same text under another
    leading number ("Problem 7: ..." vs "Problem 101: ..."; the label is not the problem). A prompt that only
    matches once case and punctuation are ignored is the kit's guess, so it is a warning. Numbers inside the text
    are the problem's own ("atomic number 3" and "atomic number 12" are two questions), never a label."""
    env = s.env()
    eval_prompts = list(dict.fromkeys(observed.prompts))
    raw_prompts = list(dict.fromkeys(observed.raw_prompts or []))
    train_prompts: list[str] = []
    for item in training.items:
        try:
            prompt = format_prompt_of(env, item)
        except Exception:
            continue  # HC301 reports prompts that cannot be built
        if isinstance(prompt, str) and prompt.strip():
            train_prompts.append(prompt)
    exact = set(train_prompts)
    bodies = {_body(p): p for p in train_prompts if _body(p)}
    near = {same_problem(p): p for p in train_prompts if same_problem(p)}
    copies: dict[str, str] = {}  # eval prompt -> the training prompt it is (identity or relabelled)
    respelled: dict[str, str] = {}
    for prompt in eval_prompts:
        if prompt in exact:
            copies[prompt] = prompt
        elif _body(prompt) in bodies:
            copies[prompt] = bodies[_body(prompt)]
        elif same_problem(prompt) in near:
            respelled[prompt] = near[same_problem(prompt)]
    for raw in raw_prompts:
        # A /v1/completions prompt is the item's prompt wrapped in the env's own text ("...\nAnswer:").
        inside = next((p for p in train_prompts if p in raw), None)
        if inside is not None:
            copies[raw] = inside
    total = len(eval_prompts) + len(raw_prompts)
    findings = []
    if copies:
        ev, tr = next(((e, t) for e, t in copies.items() if e == t or t in e), next(iter(copies.items())))
        example = (
            f"e.g. {tr[:120]!r}"
            if ev == tr or tr in ev
            else f"e.g. training {tr[:100]!r} and eval {ev[:100]!r} (the same problem under another number)"
        )
        # Both drawn from one list (every eval prompt is a training prompt and the other way round): an eval-only
        # benchmark that serves its items to `process` does this by design, as does an env that never split. Which
        # one is the kit's guess, so a warning; a partial overlap is a split that leaks, an error.
        one_list = len(copies) == total and set(copies.values()) >= set(train_prompts)
        findings.append(
            Finding(
                "HC202",
                f"eval items should not also be training items; {len(copies)} of {total} eval prompts are prompts "
                f"of training items (of {len(training.items)} seen), {example}"
                + (
                    " (a warning: get_next_item serves exactly the eval items, as an eval-only benchmark does on "
                    "purpose; if this env trains, it has no held-out split)."
                    if one_list
                    else "."
                ),
                "split once in setup(): `self._eval_items = items[:k]; self._items = items[k:]`, and draw training "
                "items only from self._items (an eval-only benchmark: make get_next_item raise, or ignore this).",
                Severity.WARNING if one_list else Severity.ERROR,
            )
        )
    if respelled:
        ev, tr = next(iter(respelled.items()))
        findings.append(
            Finding(
                "HC202",
                f"eval items may repeat training items; {len(respelled)} of {total} eval prompts equal a training "
                f"prompt once case, punctuation and a leading number are ignored, e.g. training {tr[:100]!r} and "
                f"eval {ev[:100]!r}. Whether that is the same problem is the kit's guess (a case-sensitive task "
                "exists).",
                "if they are the same problem, split the data before rewording it; if not, ignore this warning.",
                Severity.WARNING,
            )
        )
    return findings


#: A numbering label opening the prompt or one of its lines: "Problem 12: ", "#7 - ", "Q3. ", "No. 4) ".
_LEADING_LABEL = re.compile(
    r"^[ \t]*(?:(?:problem|question|task|item|exercise|example|q|no\.?)[ \t]*#?[ \t]*\d+|#[ \t]*\d+)[ \t]*[:.)\-]",
    re.IGNORECASE | re.MULTILINE,
)


def _body(prompt: str) -> str:
    """``prompt`` without the numbering labels that open a line, spacing normalised: the problem as written."""
    return " ".join(_LEADING_LABEL.sub(" ", prompt).split())


def _declared_eval_only(s: EnvSession, training: TrainingScan) -> str | None:
    """The NotImplementedError the env's OWN get_next_item raised before giving any item (an eval-only benchmark
    saying so), or None. The base class's unimplemented default is not a declaration: that is a missing method."""
    import inspect
    from pathlib import Path

    if not training.error or not training.error.startswith("NotImplementedError"):
        return None
    method = getattr(type(s.env()), "get_next_item", None)
    try:
        source = inspect.getsourcefile(method) if method is not None else None
    except TypeError:
        return None
    if source is None or Path(source).resolve() != Path(s.path).resolve():
        return None
    return training.error


def _keys_hint(s: EnvSession) -> str:
    """ ", with the keys the env reads: word, answer" (from its source), or ""."""
    from hermes_envs.conformance._static import item_keys

    keys = item_keys(s.path)
    return f", with the keys the env reads: {', '.join(keys)}" if keys else ""


def _import_cause(s: EnvSession, error: str) -> str | None:
    """The real cause and fix of an ``ImportError`` / ``ModuleNotFoundError`` (``error`` as "Type: message"), or
    None when ``error`` is something else."""
    import re

    from hermes_envs.env._causes import explain_missing_module, explain_missing_name

    missing = re.match(r"ModuleNotFoundError: No module named '([^']+)'", error)
    if missing:
        return explain_missing_module(missing.group(1), s.path)
    name = re.match(r"ImportError: cannot import name '([^']+)' from '([^']+)'", error)
    if name:
        return explain_missing_name(name.group(2), name.group(1), s.path)
    return None


def same_problem(prompt: str) -> str:
    """``prompt`` reduced to its problem: the numbering labels that open a line ("Problem 12:", "#7 -") dropped,
    case, punctuation and spacing ignored. Numbers inside the text are kept: "3+4" and "5+6", or "atomic number 3"
    and "atomic number 12", stay different problems."""
    text = _body(prompt).lower()
    text = re.sub(r"[^\w+\-*/=<>^%]+", " ", text)
    return " ".join(text.split())


def _eval_only(s: EnvSession) -> bool:
    from hermes_envs.conformance.checks.trajectory import eval_only

    return eval_only(s) is not None


@check(
    "HC203",
    "next-item-cycles",
    "get_next_item cycles past the end of the data",
    requires=("HC201",),
    why="A long run asks for more items than the dataset has; an IndexError or None stops the worker.",
    fix="Index with wrap-around (`self.items[self.i % len(self.items)]`).",
)
def next_item_cycles(s: EnvSession) -> list[Finding]:
    """``get_next_item`` that raises (IndexError, StopIteration) once the data runs out, killing a long run, or that
    never advances (the same item on every call: an index never incremented, a fresh iterator per call)."""
    training = s.observe(TrainingScan)
    if training.stuck:
        return [
            Finding(
                "HC203",
                f"get_next_item() should advance through the data; it returned the same item "
                f"{2 + STUCK_CALLS} times in a row ({repr(training.items[0])[:120]}), so every step trains "
                "on one item.",
                "advance the position on every call: `item = self.items[self.index % len(self.items)]; "
                "self.index += 1` (keep the iterator on self, not a fresh iter() per call). If the data really "
                "is one item, ignore HC203.",
            )
        ]
    if training.error and training.items:
        return [
            Finding(
                "HC203",
                f"get_next_item() should keep returning items (cycling through the data); after {len(training.items)} "
                f"items it raised {training.error}.",
                "index with wrap-around: `item = self._items[self._index % len(self._items)]; self._index += 1`.",
            )
        ]
    if not training.cycled and len(training.items) < MAX_ITEMS_SCANNED and training.items:
        return [
            Finding(
                "HC203",
                f"get_next_item() should cycle back to the first item; after {len(training.items)} items it "
                "returned None (which pauses atroposlib's worker).",
                "return items with wrap-around instead of None at the end of the list.",
            )
        ]
    return []


def unserialisable(value: Any, path: str = "item", *, qualified: bool = False) -> str | None:
    """The path and type of the first part of ``value`` json cannot write, or None (HC204's items, HC207's groups;
    ``qualified`` names the type with its module, for objects from a library such as the SDK's messages)."""
    try:
        json.dumps(value)
        return None
    except (TypeError, ValueError):
        pass
    except RecursionError:
        return f"{path} (nested too deep, or refers to itself)"
    if isinstance(value, dict):
        for key, inner in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                return f"{path} key {key!r} ({type(key).__name__})"
            found = unserialisable(inner, f"{path}[{key!r}]", qualified=qualified)
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            found = unserialisable(inner, f"{path}[{index}]", qualified=qualified)
            if found:
                return found
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}" if qualified else kind.__name__
    return f"{path} = {repr(value)[:80]} ({name})"


@check(
    "HC204",
    "items-json",
    "training items are JSON-serialisable",
    requires=("HC201",),
    why="Items are saved with groups, eval samples and wandb tables as JSON; a set or datetime crashes it.",
    fix="Keep items to JSON types (lists, str, int, float, dict).",
)
def items_json(s: EnvSession) -> list[Finding]:
    """Items holding sets, datetimes, numpy values or objects: saving groups, eval samples or a resumed run fails."""
    for index, item in enumerate(s.observe(TrainingScan).items):
        where = unserialisable(item)
        if where:
            return [
                Finding(
                    "HC204",
                    f"training items should be JSON-serialisable (atroposlib and wandb write them); got {where} in "
                    f"training item #{index}.",
                    "convert when building the items: lists instead of sets, str(...) for dates and paths, "
                    "int()/float() for numpy numbers, dicts instead of objects.",
                    subject=f"training item #{index}",
                )
            ]
    return []


@check(
    "HC205",
    "setup-fast",
    "setup() finishes quickly",
    severity=Severity.WARNING,
    requires=("HC201",),
    why="Every restart, test and CI job pays for setup().",
    fix="Cache heavy work on disk, load lazily, or raise `setup_seconds`.",
)
def setup_fast(s: EnvSession) -> list[Finding]:
    """A setup() that takes minutes (downloads, tokenizing the corpus): every trainer restart and test pays it."""
    seconds = s.observe(SetupRun).seconds
    limit = s.settings.setup_seconds
    if seconds > limit:
        return [
            Finding(
                "HC205",
                f"setup() should finish within {limit:g} s (setup_seconds); it took {seconds:.1f} s offline.",
                "do the heavy work once and cache it on disk, load lazily, or keep a small built-in sample for tests; "
                "raise setup_seconds under [tool.hermes-conformance] if this is expected.",
                Severity.WARNING,
            )
        ]
    return []
