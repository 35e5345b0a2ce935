"""``POST /v1/chat/completions``: the chat completion (or its SSE chunks) for the turns chosen for a request."""

from __future__ import annotations

import re
from typing import Any

import orjson

from ._plan import Plan, Planner
from ._records import Call
from ._replies import Reply, dumps
from ._requests import validate_chat
from ._tokens import encode_plain, logprob
from ._turns import Turn
from ._view import RequestView

__all__ = ["chat_completion"]

_orjson = orjson.dumps
_WORDS = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")


def chat_completion(model: Planner, call: Call, body: Any) -> Reply:
    """Validate the request, pick the turn and fault, and build the completion (streamed or not)."""
    validate_chat(body, call.route)
    # every field read here is strict in ChatRequest: its value in the validated body is the validated one
    get = body.get
    top_logprobs = (get("top_logprobs") or 0) if get("logprobs") else None
    view = RequestView(body)
    call.stream = stream = get("stream") is True
    plan = model.plan(call, view, "chat")
    if isinstance(plan, Reply):
        return plan
    turn, n = plan.turn, get("n") or 1
    if n == 1 and top_logprobs is None and not stream and plan.fault is None and not turn.choices:
        payload = _plain(model, plan, turn, body, view)
        if payload is not None:
            call.response_json = payload  # the record keeps the bytes sent
            return Reply(200, payload)
    turns = [turn] * n if not turn.choices else turn.choice_turns(n)  # Turn.choice_turns, inline for a turn
    messages = [_message(t, plan, i, view) for i, t in enumerate(turns)]
    count = model.count
    prompt_toks = count.contents(body["messages"])  # each message's text counted once, then memoised
    completion_toks = 0
    for m, _ in messages:
        completion_toks += count(m["content"] or "")
        if "tool_calls" in m:
            for tc in m["tool_calls"]:
                completion_toks += count(tc["function"]["arguments"])
    usage = {
        "prompt_tokens": prompt_toks,
        "completion_tokens": completion_toks,
        "total_tokens": prompt_toks + completion_toks,
    }
    cid = f"chatcmpl-fake{plan.seq}"
    name = get("model") or model.model
    if top_logprobs is None:
        pairs: list[tuple[Any, Any]] = [(m, None) for m in messages]
    else:
        tok = model.tokenizer
        pairs = [(m, content_logprobs(tok, m[0]["content"] or "", top_logprobs)) for m in messages]
    sent = pairs if plan.fault is None else plan.effect.choices(pairs)  # no fault: the choices as built
    response = {
        "id": cid,
        "object": "chat.completion",
        "created": model.created,
        "model": name,
        "choices": [
            {
                "index": i,
                "message": m,
                "logprobs": None if lp is None else {"content": lp, "refusal": None},
                "finish_reason": f,
            }
            for i, ((m, f), lp) in enumerate(sent)
        ],
        "usage": usage,
        "system_fingerprint": None,
    }
    if stream:
        call.response = response
        options = get("stream_options")
        include_usage = bool(options and options.get("include_usage"))
        chunks = _chunks(
            model, cid, name, [m for m, _ in sent], usage if include_usage else None, [lp for _, lp in sent]
        )
        events = [b"data: " + dumps(c) + b"\n\n" for c in chunks]
        return plan.effect.stream_reply(plan.fault, events, plan.delay)
    payload = dumps(response)
    call.response_json = payload  # the record keeps the bytes sent (before any fault garbles them)
    if plan.fault is None:  # what NO_FAULT.body_reply answers, without the call
        return Reply(200, payload)
    return plan.effect.body_reply(plan.fault, payload, plan.delay)


_PLAIN = (
    b'{"id":"chatcmpl-fake%d","object":"chat.completion","created":%d,"model":%b,"choices":[{"index":0,'
    b'"message":%b,"logprobs":null,"finish_reason":%b}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,'
    b'"total_tokens":%d},"system_fingerprint":null}'
)


def _plain(model: Planner, plan: Plan, turn: Turn, body: Any, view: RequestView) -> bytes | None:
    """The completion of the commonest request (one choice, no fault, no stream, no logprobs) as the bytes
    :func:`~._replies.dumps` makes of the full response, without building it: the message is encoded alone and
    set in the fixed text around it (orjson encodes a dict as its members' encodings joined). None when a piece
    needs the fallback encoder (integers over 64 bits, lone surrogates): the caller then builds it in full."""
    msg, finish = _message(turn, plan, 0, view)
    count = model.count
    prompt_toks = count.contents(body["messages"])
    completion_toks = count(msg["content"] or "")
    if "tool_calls" in msg:
        for tc in msg["tool_calls"]:
            completion_toks += count(tc["function"]["arguments"])
    created = model.created
    if type(created) is not int:  # %d would not write what the encoder writes for it
        return None
    try:
        return _PLAIN % (
            plan.seq,
            created,
            _orjson(body.get("model") or model.model),
            _orjson(msg),
            _orjson(finish),
            prompt_toks,
            completion_toks,
            prompt_toks + completion_toks,
        )
    except TypeError:  # orjson.JSONEncodeError, or a ``created`` that is not an int
        return None


def _message(turn: Turn, plan: Plan, choice: int, view: RequestView) -> tuple[dict[str, Any], str]:
    """One choice's assistant message and finish_reason, with the fault's changes."""
    calls, content = turn.tool_calls, turn.content
    finish = turn.finish_reason or ("tool_calls" if calls else "stop")  # Turn.resolved_finish_reason
    if plan.fault is not None:
        calls, content, finish = plan.effect.chat_message(plan.fault, list(calls), content, finish, view)
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": content if (content is not None or not calls) else None,
        "refusal": None,
    }
    if msg["content"] is None and not calls:
        msg["content"] = ""
    if turn.reasoning_content is not None:
        msg["reasoning_content"] = turn.reasoning_content
    if calls:
        msg["tool_calls"] = [
            {
                "id": c.id or f"call_fake{plan.seq}_{choice}_{j}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for j, c in enumerate(calls)
        ]
    return msg, finish


def _pieces(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(0, len(s), n)] if s else []


def _chunks(
    model: Planner,
    cid: str,
    name: str,
    messages: list[tuple[dict[str, Any], str]],
    usage: dict[str, int] | None,
    logprobs: list[list[dict[str, Any]] | None],
) -> list[dict[str, Any]]:
    """The completion as OpenAI streams it: role, reasoning, content (one token per chunk with logprobs), tool-call
    deltas, the finish chunk per choice, then the usage chunk when asked for."""
    base: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": model.created,
        "model": name,
        "system_fingerprint": None,
    }
    if usage is not None:
        base["usage"] = None
    size = model.stream_chunk_chars
    out: list[dict[str, Any]] = []

    def emit(i: int, delta: dict[str, Any], finish: str | None = None, lp: Any = None) -> None:
        out.append(
            {**base, "choices": [{"index": i, "delta": delta, "logprobs": lp, "finish_reason": finish}]}
        )

    for i, (msg, finish) in enumerate(messages):
        calls = msg.get("tool_calls") or []
        content = msg.get("content")
        emit(i, {"role": "assistant", "content": "" if content is not None else None, "refusal": None})
        if msg.get("reasoning_content"):
            for p in _pieces(msg["reasoning_content"], size):
                emit(i, {"reasoning_content": p})
        token_lps = logprobs[i] if logprobs else None
        if token_lps is not None:  # one token per chunk, each with its logprobs (as OpenAI streams them)
            for entry in token_lps:
                emit(i, {"content": entry["token"]}, lp={"content": [entry], "refusal": None})
        else:
            for p in _pieces(content or "", size):
                emit(i, {"content": p})
        for j, tc in enumerate(calls):
            head = {"index": j, "id": tc["id"], "type": "function"}
            emit(i, {"tool_calls": [{**head, "function": {"name": tc["function"]["name"], "arguments": ""}}]})
            for p in _pieces(tc["function"]["arguments"], size):
                emit(i, {"tool_calls": [{"index": j, "function": {"arguments": p}}]})
        emit(i, {}, finish)
    if not messages:
        out.append({**base, "choices": []})
    if usage is not None:
        out.append({**base, "choices": [], "usage": usage})
    return out


def content_logprobs(tokenizer: Any, text: str, top: int) -> list[dict[str, Any]]:
    """OpenAI ``logprobs.content`` for a message's content: one entry per token, deterministic values.

    Tokens come from the tokenizer when there is one (each id decoded alone), else from splitting the text
    into words and punctuation with their leading spaces. Their texts always join back into ``text``.
    """
    if not text:
        return []
    toks: list[tuple[str, float]] = []
    if tokenizer is not None:
        toks = [(tokenizer.decode([i]), logprob(i)) for i in encode_plain(tokenizer, text)]
        if "".join(t for t, _ in toks) != text:  # a tokenizer whose single-id decode is lossy: use words
            toks = []
    if not toks:
        toks = [(t, logprob(sum(map(ord, t)))) for t in _WORDS.findall(text)]
    out = []
    for tok, lp in toks:
        entry: dict[str, Any] = {"token": tok, "logprob": lp, "bytes": list(tok.encode("utf-8"))}
        alts = [(tok, lp)] + [(f"{tok}~{j}", round(lp - j, 4)) for j in range(1, top)]
        entry["top_logprobs"] = [
            {"token": t, "logprob": v, "bytes": list(t.encode("utf-8"))} for t, v in alts[:top]
        ]
        out.append(entry)
    return out
