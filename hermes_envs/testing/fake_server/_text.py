"""The raw-text routes: ``POST /v1/completions`` and vLLM / SGLang ``POST /generate``.

A turn is written as the model would write it, in the configured tool-call format (the parser's ``render``), and
for ``/generate`` turned into token ids with the server's tokenizer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._fault_effects import FaultEffect, break_json
from ._plan import Planner
from ._records import Call
from ._replies import Miss, Reply, dumps
from ._requests import BadRequest, CompletionRequest, SglangGenerateRequest, VllmGenerateRequest, validate
from ._tokens import decode, encode_plain, end_of_turn, is_ids, logprob, need_tokenizer
from ._tool_call import ToolCall
from ._turns import Turn
from ._view import RequestView

if TYPE_CHECKING:
    from ._faults import Fault

__all__ = ["completion", "generate", "render_turn"]


def completion(model: Planner, call: Call, body: Any) -> Reply:
    """``/v1/completions``: each choice is the turn rendered as text."""
    req = validate(CompletionRequest, body, f"POST {call.route}")
    prompt = req.prompt
    prompt_text = (
        prompt
        if isinstance(prompt, str)
        else decode(model.tokenizer, prompt)
        if is_ids(prompt)
        else str(prompt)
    )
    view = RequestView({**body, "messages": []}, prompt_text=prompt_text)
    plan = model.plan(call, view, "text")
    if isinstance(plan, Reply):
        return plan
    texts = [
        render_turn(t, plan.fault, plan.effect, model.tool_parser) for t in plan.turn.choice_turns(req.n or 1)
    ]
    ptoks = model.count(prompt_text)
    ctoks = sum(model.count(t) for t, _ in texts)
    usage = {"prompt_tokens": ptoks, "completion_tokens": ctoks, "total_tokens": ptoks + ctoks}
    base = {
        "id": f"cmpl-fake{plan.seq}",
        "object": "text_completion",
        "created": model.created,
        "model": req.model or model.model,
        "system_fingerprint": None,
    }
    sent = plan.effect.choices(texts)
    call.response = {
        **base,
        "choices": [
            {"index": i, "text": t, "logprobs": None, "finish_reason": f} for i, (t, f) in enumerate(sent)
        ],
        "usage": usage,
    }
    if not req.stream:
        return plan.effect.body_reply(plan.fault, dumps(call.response), plan.delay)
    call.stream = True
    chunks = []
    for i, (t, f) in enumerate(sent):
        for p in [t[j : j + model.stream_chunk_chars] for j in range(0, len(t), model.stream_chunk_chars)]:
            chunks.append(
                {**base, "choices": [{"index": i, "text": p, "logprobs": None, "finish_reason": None}]}
            )
        chunks.append({**base, "choices": [{"index": i, "text": "", "logprobs": None, "finish_reason": f}]})
    if req.stream_options and req.stream_options.include_usage:
        chunks.append({**base, "choices": [], "usage": usage})
    events = [b"data: " + dumps(c) + b"\n\n" for c in chunks]
    return plan.effect.stream_reply(plan.fault, events, plan.delay)


def generate(model: Planner, call: Call, body: Any) -> Reply:
    """vLLM (``prompt``) or SGLang (``input_ids`` / ``text`` + ``sampling_params``) native generation."""
    where = f"POST {call.route}"
    if not isinstance(body, Mapping):
        raise BadRequest(f"{where} body should be a JSON object; got {type(body).__name__}.")
    tok = model.tokenizer
    sglang = "input_ids" in body or "sampling_params" in body or "text" in body
    need_tokenizer(tok, call)
    if sglang:
        sg = validate(SglangGenerateRequest, body, where)
        params = body.get("sampling_params") or {}
        sp = sg.sampling_params
        prompt_ids = list(sg.input_ids) if sg.input_ids is not None else list(tok.encode(sg.text or ""))
        n, max_toks = (sp.n if sp else None) or 1, sp.max_new_tokens if sp else None
    else:
        vl = validate(VllmGenerateRequest, body, where)
        p = vl.prompt
        prompt_ids = list(p.get("prompt_token_ids") or []) if isinstance(p, dict) else list(tok.encode(p))
        params = body
        n, max_toks = vl.n or 1, vl.max_tokens
    view = RequestView(
        {"model": body.get("model"), "temperature": params.get("temperature"), "messages": []},
        prompt_text=decode(tok, prompt_ids),
    )
    plan = model.plan(call, view, "text")
    if isinstance(plan, Reply):
        return plan
    samples = []
    for t in plan.turn.choice_turns(n):
        text, finish = render_turn(t, plan.fault, plan.effect, model.tool_parser)
        text_ids = encode_plain(tok, text) if text else []
        out_ids = text_ids + end_of_turn(tok, finish)
        if max_toks is not None and len(out_ids) > max_toks:
            out_ids, finish = out_ids[:max_toks], "length"
        # Like vLLM: token_ids end with the end-of-turn token, `text` does not (special tokens skipped).
        samples.append(
            (decode(tok, out_ids[: len(text_ids)]), out_ids, [logprob(i) for i in out_ids], finish)
        )
    data: Any
    if sglang:
        results = [
            {
                "text": text,
                "output_ids": ids,
                "meta_info": {
                    "id": f"fake{i}",
                    "prompt_tokens": len(prompt_ids),
                    "completion_tokens": len(ids),
                    "finish_reason": {"type": fin, "matched": None}
                    if fin != "length"
                    else {"type": "length", "length": len(ids)},
                    "output_token_logprobs": [[lp, tid, None] for lp, tid in zip(lps, ids, strict=True)],
                },
            }
            for i, (text, ids, lps, fin) in enumerate(samples)
        ]
        data = results[0] if n == 1 else results
    else:
        data = {
            "text": [s[0] for s in samples],
            "token_ids": [s[1] for s in samples],
            "prompt_token_ids": prompt_ids,
            "logprobs": [[[{str(tid): lp}] for tid, lp in zip(s[1], s[2], strict=True)] for s in samples],
            "finish_reasons": [s[3] for s in samples],
        }
        if vl.prompt_logprobs is not None:
            data["prompt_logprobs"] = prompt_logprobs(prompt_ids, vl.prompt_logprobs)
    call.response = data
    return plan.effect.body_reply(plan.fault, dumps(data), plan.delay)


def prompt_logprobs(prompt_ids: list[int], top: int) -> list[dict[str, float] | None]:
    """vLLM's ``prompt_logprobs`` for ``prompt_ids`` asked with ``prompt_logprobs=top``: one entry per prompt
    position, None for the first (nothing precedes it), else ``{token id: logprob}`` holding the prompt's own token
    (first, the most likely) and the next ``top - 1`` alternatives. Values are deterministic and below zero."""
    out: list[dict[str, float] | None] = [None] if prompt_ids else []
    for tid in prompt_ids[1:]:
        own = logprob(tid)
        entry = {str(tid): own}
        for j in range(1, top):
            entry[str(tid + j)] = round(own - j, 4)
        out.append(entry)
    return out


def render_turn(turn: Turn, fault: Fault | None, effect: FaultEffect, tool_parser: str) -> tuple[str, str]:
    """A turn as raw model text in the ``tool_parser`` format, and its finish_reason, with the fault's changes."""
    calls = effect.text_calls(fault, list(turn.tool_calls))
    think = f"<think>\n{turn.reasoning_content}\n</think>\n" if turn.reasoning_content else ""
    text = think + _render(turn.content, calls, effect.breaks_json, tool_parser)
    return effect.text_output(fault, text, turn.finish_reason or "stop")


def _render(content: str | None, calls: list[ToolCall], broken: bool, tool_parser: str) -> str:
    """Content and tool calls as the model would write them (the configured parser's ``render``)."""
    if not calls:
        return content or ""
    wire: list[dict[str, Any]] = [
        {
            "id": c.id or f"call_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": break_json(c.arguments) if broken else c.arguments},
        }
        for i, c in enumerate(calls)
    ]
    if not broken:
        from hermes_envs.parsers import get_parser  # light: openai types only

        try:
            return get_parser(tool_parser).render(content or None, wire)
        except (KeyError, ValueError) as exc:  # unknown parser, or a turn the format cannot express
            raise Miss(
                f"the scripted turn cannot be written in the {tool_parser!r} tool-call format: {exc} "
                "Fix: change the turn (e.g. drop its content) or the server's tool_parser.",
                500,
                "fake_server_render",
            ) from None
    # Deliberately invalid JSON cannot go through a renderer that re-encodes it: write the hermes form by hand.
    parts = [content] if content else []
    for w in wire:
        fn = w["function"]
        parts.append(
            '<tool_call>\n{"name": '
            + json.dumps(fn["name"])
            + ', "arguments": '
            + fn["arguments"]
            + "}\n</tool_call>"
        )
    return "\n".join(parts)
