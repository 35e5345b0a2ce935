"""HC5xx — trajectories: a group collected through the fake server is what atroposlib can train on."""

from __future__ import annotations

import json
import math
import subprocess
from typing import Any

from hermes_envs._chat import offered_tool_names
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._observations.group import CollectedGroup
from hermes_envs.conformance._probes import call_each_tool_then
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession


def eval_only(s: EnvSession) -> str | None:
    """Why the env is eval-only, or None: its collect_trajectories returned no group, raised nothing and never
    asked the model, also when asked again (upstream's benchmarks stub it as ``return None, []`` and do all their
    work in evaluate()). Such an env has no training group to check."""
    observed = s.observe(CollectedGroup)
    if observed.group is not None or observed.error or observed.requests:
        return None
    return (
        "the env collects no training rollouts: collect_trajectories(item) returned None without asking the "
        "model (an eval-only env, like upstream's benchmarks); if it should train, return a scored group"
    )


@check(
    "HC501",
    "smoke-group",
    "collect_trajectories gives group_size aligned tokens/masks/scores",
    requires=("HC201",),
    why="atroposlib needs group_size aligned tokens/masks/scores; misalignment crashes or corrupts batches.",
    fix="Build masks from the same tokenization as tokens.",
)
def smoke_group(s: EnvSession) -> list[Finding]:
    """A rollout group that crashes, is empty, has the wrong size, or tokens and masks of different lengths."""
    observed = s.observe(CollectedGroup)
    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    env = s.env()
    group_size = env.config.group_size
    if observed.error:
        return [
            Finding(
                "HC501",
                f"collect_trajectories(item) should return a scored group; it raised {observed.error}.",
                "run the env against the fake server (hermes-envs fake-server) to see where it fails.",
            )
        ]
    group = observed.group
    if not group:
        return [
            Finding(
                "HC501",
                f"collect_trajectories(item) should return a scored group of {group_size}; got "
                f"{group!r} after {len(observed.requests)} model requests"
                + (", also when every rollout gave a different answer" if observed.retried else "")
                + ".",
                "make sure every rollout returns a ScoredDataItem (tokens, masks, scores); returning None drops "
                "the group, which atroposlib only expects for a group to skip (e.g. all scores tie).",
            )
        ]
    findings = []
    tokens, masks, scores = group.get("tokens") or [], group.get("masks") or [], group.get("scores") or []
    if not (len(tokens) == len(masks) == len(scores) == group_size):
        findings.append(
            Finding(
                "HC501",
                f"a group should hold {group_size} tokens, masks and scores; got "
                f"{len(tokens)} tokens, {len(masks)} masks, {len(scores)} scores.",
                "return one ScoredDataItem per rollout from collect_trajectory.",
            )
        )
    for i, (tok, mask) in enumerate(zip(tokens, masks)):
        if isinstance(tok, list) and tok and all(isinstance(t, list) for t in tok):
            findings.append(
                Finding(
                    "HC501",
                    f"rollout {i} tokens should be one rollout's list of token ids; got a list of {len(tok)} token "
                    "lists: the env's collect_trajectory returns a whole group (a ScoredDataGroup) where atroposlib's "
                    "collect_trajectories calls it once per rollout and expects ONE ScoredDataItem, so the group is "
                    "nested inside a group.",
                    "return one rollout per collect_trajectory call (`tokens`: list[int], `masks`, `scores`: a "
                    "float), or, if the env builds the whole group at once, override collect_trajectories(item) "
                    "instead and return (group, backlog) from it.",
                    subject=f"rollout {i}",
                )
            )
            return findings  # one cause: the scores are nested the same way
        if not isinstance(tok, list) or not all(isinstance(t, int) for t in tok):
            shown = (
                f"a {type(tok).__name__} with keys {sorted(tok.keys())}"
                if hasattr(tok, "keys")
                else repr(tok)[:80]
            )
            installed = _library_tokenizer_broken(s) if hasattr(tok, "keys") else None
            if installed:
                findings.append(
                    Finding(
                        "HC501",
                        f"rollout {i} tokens should be a list of integer token ids; got {shown}. The env builds "
                        f"them with atroposlib's own tokenize_for_trainer, which returns such tokens for ANY chat "
                        f"with these installed versions ({installed}): an installation problem, not the env's code.",
                        "install versions that work together: pin `transformers<5` next to atroposlib 0.4 (its "
                        "tokenize_for_trainer passes apply_chat_template's BatchEncoding on as the tokens), or a "
                        "newer atroposlib that handles transformers 5.",
                        Severity.WARNING,
                        subject=f"rollout {i}",
                    )
                )
                break
            findings.append(
                Finding(
                    "HC501",
                    f"rollout {i} tokens should be a list of integer token ids; got {shown}.",
                    "with transformers >= 5, tokenizer.apply_chat_template(...) returns a BatchEncoding (a dict), "
                    "and atroposlib 0.4's tokenize_for_trainer passes it on as the 'tokens'. Call "
                    "apply_chat_template(..., return_dict=False), pin transformers<5, or build tokens and masks "
                    "with hermes_envs.env.tokenize_transcript(self.tokenizer, messages, tools).",
                    subject=f"rollout {i}",
                )
            )
            break
        if len(tok) != len(mask) or not tok:
            findings.append(
                Finding(
                    "HC501",
                    f"rollout {i} should have equally long, non-empty tokens and masks; "
                    f"got {len(tok)} tokens and {len(mask)} masks.",
                    "build masks from the same tokenization as tokens (and append to both when "
                    "you add a token such as EOS).",
                    subject=f"rollout {i}",
                )
            )
            break
    for i, score in enumerate(scores):
        if not isinstance(score, (int, float)) or not math.isfinite(score):
            findings.append(
                Finding(
                    "HC501",
                    f"score {i} should be a finite number; got {score!r}.",
                    "return a float from compute_reward.",
                    subject=f"rollout {i}",
                )
            )
            break
    return findings


def _token_ids(tokens: object) -> bool:
    """True for one rollout's tokens as the trainer needs them: a list of ints."""
    return isinstance(tokens, list) and all(isinstance(t, int) for t in tokens)


def _library_tokenizer_broken(s: EnvSession) -> str | None:
    """The installed versions ("atroposlib 0.4.0, transformers 5.2.0") when the env's module calls atroposlib's own
    tokenize_for_trainer AND that function, given a two-message chat and the env's tokenizer, returns tokens that
    are not a list of ints: re-verified here, so the fault is the installed library pair, never the env's code."""
    import inspect
    from importlib import metadata

    try:
        from atroposlib.utils.tokenize_for_trainer import tokenize_for_trainer
    except Exception:
        return None
    env = s.env()
    module = inspect.getmodule(type(env))
    if module is None or getattr(module, "tokenize_for_trainer", None) is not tokenize_for_trainer:
        return None
    tokenizer = getattr(env, "tokenizer", None)
    if tokenizer is None:
        return None
    chat = [{"role": "user", "content": "Say ok."}, {"role": "assistant", "content": "ok"}]
    try:
        # (mypy narrows the untyped import to None through the identity test above)
        tokens = tokenize_for_trainer(tokenizer, chat).get("tokens")  # type: ignore[misc]
    except Exception:
        return None
    if isinstance(tokens, list) and all(isinstance(t, int) for t in tokens):
        return None
    versions = []
    for name in ("atroposlib", "transformers"):
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(versions) or "the installed atroposlib and transformers"


def _prompt_span(
    s: EnvSession,
    tokens: list[int],
    conversation: list[dict[str, Any]] | None,
    tools: list[dict[str, Any]] | None,
) -> int | None:
    """How many leading tokens of a rollout are its prompt (everything before the model's first turn, rendered with
    the env's tokenizer as the trainer sees it), or None when the rollout's tokens are not that rendering (another
    template, Phase 2 tokens): HC502 then judges the first position only."""
    from hermes_envs.env import transcript_spans

    tokenizer = getattr(s.env(), "tokenizer", None)
    if tokenizer is None or not conversation or not isinstance(tokens, list):
        return None
    for offered in (tools, None):
        try:
            spans = transcript_spans(tokenizer, conversation, offered)
        except Exception:
            return None
        if not spans or spans[0][1]:
            return None
        ids = list(tokenizer.encode(spans[0][0], add_special_tokens=False))
        if ids and tokens[: len(ids)] == ids:
            return len(ids)
    return None


@check(
    "HC502",
    "trainable-group",
    "prompt tokens masked, the model's tokens trained, tool messages kept",
    requires=("HC501",),
    why=(
        "Unmasked prompts train the model to write prompts; fully masked rollouts teach nothing; missing "
        "tool messages hide what the model saw."
    ),
    fix="Mask prompt/tool tokens with -100; keep result.messages.",
)
def trainable_group(s: EnvSession) -> list[Finding]:
    """Masks that train on the prompt (or on nothing), and groups that drop the tool-role messages."""
    observed = s.observe(CollectedGroup)
    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    group = observed.group or {}
    if not all(_token_ids(tok) for tok in group.get("tokens") or []):
        # HC501 reported tokens that are not token ids (a warning when the installed atroposlib/transformers pair
        # makes them): their masks say nothing about the env.
        raise Skip("the group's tokens are not lists of token ids (see HC501)")
    findings = []
    conversations = group.get("messages") or []
    tools = next((c.body.get("tools") for c in observed.requests if c.body.get("tools")), None)
    for i, (tok, mask) in enumerate(zip(group.get("tokens") or [], group.get("masks") or [])):
        span = _prompt_span(s, tok, conversations[i] if i < len(conversations) else None, tools)
        trained = [p for p in range(min(span or 1, len(mask))) if mask[p] != -100]
        if trained:
            where = (
                f"{len(trained)} of its {span} prompt tokens (the messages before the model's first turn) are "
                f"trained, the first at position {trained[0]}"
                if span
                else f"the first position is {mask[0]}"
            )
            findings.append(
                Finding(
                    "HC502",
                    f"rollout {i} should mask its prompt tokens with -100; {where}, so the model would be trained "
                    "on the prompt.",
                    "set masks to -100 on every prompt/tool position (atroposlib's "
                    "tokenize_for_trainer does it).",
                    subject=f"rollout {i}",
                )
            )
            break
        if all(m == -100 for m in mask):
            findings.append(
                Finding(
                    "HC502",
                    f"rollout {i} should train on the model's own tokens; every mask "
                    "position is -100, so the rollout teaches nothing.",
                    "leave the assistant tokens unmasked.",
                    subject=f"rollout {i}",
                )
            )
            break
    offered = any(offered_tool_names(c.body) for c in observed.requests)
    called = any("tool" == m.get("role") for c in observed.requests for m in c.body.get("messages") or [])
    messages = group.get("messages") or []
    if (
        offered
        and called
        and messages
        and not any(m.get("role") == "tool" for conv in messages for m in conv or [])
    ):
        findings.append(
            Finding(
                "HC502",
                "a group whose model called tools should keep the tool-role messages in "
                "`messages`; none were found, so the trainer and the HTML view never see the tool "
                "results.",
                "return result.messages unchanged in the ScoredDataItem.",
            )
        )
    return findings


@check(
    "HC503",
    "process-run",
    "a one-step atroposlib `process` run writes JSONL and HTML (slow)",
    requires=("HC501",),
    why="The first real `process` run is where CLI wiring, config overrides and group writing meet.",
    fix="Run `python env.py process` against `hermes-envs fake-server` and fix what breaks.",
)
def process_run(s: EnvSession) -> list[Finding]:
    """An env that passes in-process but fails under ``python env.py process`` (no or wrong cli() call, CLI
    overrides that break config_init, groups that cannot be written): the first real run dies."""
    if not s.settings.slow:
        raise Skip(
            "slow check (a `process` run in a subprocess, a few seconds); enable it with --hermes-slow "
            "or `slow = true` under [tool.hermes-conformance]"
        )
    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    from hermes_envs.testing._process_run import run_process

    out = s.tmp / f"process-{s.path.stem}.jsonl"
    with s.timed("process"), s.responding(call_each_tool_then("I think the answer is 0.")):
        try:
            done = run_process(s.path, s.tmp, s.server.base_url, out_path=out, timeout=180, cwd=s.path.parent)
        except subprocess.TimeoutExpired:
            return [
                Finding(
                    "HC503",
                    f"`python {s.path.name} process` should finish one step; it ran for 180 s.",
                    "check that get_next_item returns items and the server settings come from the CLI.",
                )
            ]
    tail = " | ".join(line for line in (done.stderr or "").strip().splitlines()[-3:])[-400:]
    rows = []
    if out.is_file():
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    html = out.with_suffix(".html")
    if done.returncode != 0 or not rows:
        return [
            Finding(
                "HC503",
                f"`python {s.path.name} process --env.total_steps 1 ...` should write scored groups to JSONL; it exited "
                f"{done.returncode} with {len(rows)} group(s) written. Last output: {tail or '(none)'}",
                f"run that command yourself against `hermes-envs fake-server`; check the `__main__` block calls "
                f"{s.class_name}.cli() on this class.",
            )
        ]
    findings = []
    if not all(r.get("tokens") and r.get("masks") and r.get("scores") is not None for r in rows):
        findings.append(
            Finding(
                "HC503",
                "every group written by `process` should hold tokens, masks and scores; some are empty.",
                "return non-empty tokens/masks/scores from collect_trajectories.",
            )
        )
    if not html.is_file():
        findings.append(
            Finding(
                "HC503",
                f"`process` should also write the HTML view ({html.name}); none was written.",
                "keep messages in the groups (atroposlib renders them to HTML).",
            )
        )
    return findings


@check(
    "HC504",
    "groups-survive-send-filters",
    "atroposlib's send filters keep the env's groups (group size vs equal scores)",
    requires=("HC501",),
    why=(
        "atroposlib drops a group whose scores are all equal (ensure_scores_are_not_same): with group_size 1 "
        "every group is dropped and the run trains on nothing."
    ),
    fix="group_size >= 2 (or ensure_scores_are_not_same=False for single rollouts).",
)
def groups_survive_send_filters(s: EnvSession) -> list[Finding]:
    """Settings under which atroposlib's ``handle_send_to_api`` drops every group, so a run trains on nothing:
    ``group_size`` 1 with ``ensure_scores_are_not_same`` (one score is always "all the same"). The kit's own runs
    relax this, so it is read from the env's ``config_init()``. (``max_token_length`` is no send filter: atroposlib
    skips over-long groups by the trainer's ``max_token_len`` from the run-api's /info, which the env never sets.)"""
    config, _servers = s.config_init()
    findings = []
    group_size = getattr(config, "group_size", None)
    if getattr(config, "ensure_scores_are_not_same", False) and group_size == 1:
        findings.append(
            Finding(
                "HC504",
                "group settings should let atroposlib keep some groups; config_init() sets group_size=1 with "
                "ensure_scores_are_not_same=True, and a group of one score always has all its scores the same, "
                "so handle_send_to_api drops every group.",
                "use group_size >= 2 (GRPO needs several rollouts per prompt to compare), or set "
                "ensure_scores_are_not_same=False if you really train on single rollouts.",
                subject="config_init",
            )
        )
    return findings
