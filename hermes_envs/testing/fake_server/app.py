"""The fake model: routes, responders and wire formats, and the aiohttp app that serves them.

:class:`FakeModel` turns ``(method, path, body bytes)`` into a :class:`Reply` without any I/O, so the same logic
serves real HTTP (:func:`make_app`) and the in-process transport (``server.py``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .faults import Fault, FaultInjector
from .policies import Policy, turn_from_policy_result
from .requests import (
    BadRequest,
    ChatRequest,
    CompletionRequest,
    DetokenizeRequest,
    SglangGenerateRequest,
    TokenizeRequest,
    VllmGenerateRequest,
    decode_body,
    validate,
)
from .scripts import RequestView, Script, ToolCall, Turn, text_of, tool_names

__all__ = ["Call", "FakeModel", "Reply", "make_app"]

_dumps = json.JSONEncoder(separators=(",", ":")).encode  # ASCII-escaped: the C fast path


@dataclass
class Call:
    """One request the server received and what it answered."""

    route: str
    method: str
    body: Any
    status: int = 200
    response: Any = None
    matched_turn: Turn | None = None
    turn_index: int | None = None  # 0-based position in the script (turn k+1)
    fault: str | None = None
    error: str | None = None
    stream: bool = False
    responder: str = "script"  # "script" | "policy" | "miss" | "route"

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300 and self.error is None


@dataclass
class Reply:
    """What to send: a body or SSE chunks, plus transport-level behaviour (delay, drop, truncation)."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    sse: list[bytes] | None = None
    delay: float = 0.0
    drop: bool = False  # close the connection without a response
    cut: bool = False  # send what is here (partial body / first SSE chunks) and then close the connection
    declared_length: int | None = None  # for a cut body: the Content-Length announced


class _Miss(Exception):
    def __init__(self, message: str, status: int = 409, code: str = "fake_server_miss") -> None:
        super().__init__(message)
        self.message, self.status, self.code = message, status, code


def _error_body(message: str, code: str, typ: str = "invalid_request_error") -> bytes:
    return _dumps({"error": {"message": message, "type": typ, "param": None, "code": code}}).encode()


def _pieces(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(0, len(s), n)] if s else []


class FakeModel:
    """The server's brain: thread-safe, I/O-free. One per FakeOpenAIServer."""

    def __init__(
        self,
        script: Script | None = None,
        policy: Policy | None = None,
        *,
        strict: bool = True,
        model: str = "fake",
        tokenizer: Any = None,
        faults: list[Fault] | None = None,
        fault_seed: int = 0,
        assistant_marker: str = "<|im_start|>assistant",
        stream_chunk_chars: int = 16,
        tool_parser: str = "hermes",
    ) -> None:
        self.script = script
        self.tool_parser = tool_parser
        self.policy = policy
        self.strict = strict
        self.model = model
        self.tokenizer = tokenizer
        self.injector = FaultInjector(faults, seed=fault_seed)
        self.assistant_marker = assistant_marker
        self.stream_chunk_chars = max(1, stream_chunk_chars)
        self.calls: list[Call] = []
        self.misses: list[str] = []
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self.created = int(time.time())
        self._routes: dict[tuple[str, str], Callable[[Call, Any], Reply]] = {}
        for path in ("/v1/chat/completions", "/chat/completions"):
            self._routes["POST", path] = self._chat
        for path in ("/v1/completions", "/completions"):
            self._routes["POST", path] = self._completions
        for path in ("/v1/models", "/models"):
            self._routes["GET", path] = self._models
        for path in ("/health", "/v1/health", "/health_generate"):
            self._routes["GET", path] = self._health
        self._routes["POST", "/generate"] = self._generate
        for path in ("/tokenize", "/v1/tokenize"):
            self._routes["POST", path] = self._tokenize
        for path in ("/detokenize", "/v1/detokenize"):
            self._routes["POST", path] = self._detokenize

    # ------------------------------------------------------------------------------------------------ entry
    def handle(self, method: str, path: str, raw: bytes) -> Reply:
        path = path.rstrip("/") or "/"
        body: Any = None
        call = Call(route=path, method=method, body=None)
        with self._lock:
            self.calls.append(call)
        handler = self._routes.get((method, path))
        try:
            if handler is None:
                known = sorted({p for _, p in self._routes})
                raise _Miss(
                    f"{method} {path} should be one of the fake server's routes; got an unknown route. "
                    f"Known routes: {', '.join(known)}.\nFix: check the base_url (it should end in /v1) and the "
                    "client's path.",
                    status=404,
                    code="unknown_route",
                )
            if method == "POST":
                body = decode_body(raw, f"{method} {path}")
            call.body = body
            return handler(call, body)
        except BadRequest as b:
            return self._refuse(call, _Miss(b.message, 400, b.code))
        except _Miss as m:
            return self._refuse(call, m)
        except Exception as e:  # a bug or a user tokenizer/parser raising: a recorded 500, never a silent one
            return self._refuse(
                call,
                _Miss(
                    f"{method} {path} should be answered; the fake server failed with {type(e).__name__}: {e}\n"
                    "Fix: if the traceback is in your policy or tokenizer, correct it; otherwise report a bug in "
                    "the fake server.",
                    500,
                    "fake_server_error",
                ),
            )

    def _refuse(self, call: Call, m: _Miss) -> Reply:
        """Record the request as a miss (a failure for assert_no_failures()) and answer with its error."""
        call.status, call.error, call.responder = m.status, m.message, "miss"
        with self._lock:
            self.misses.append(m.message)
        return Reply(status=m.status, body=_error_body(m.message, m.code))

    # ----------------------------------------------------------------------------------------------- routes
    def _health(self, call: Call, body: Any) -> Reply:
        call.responder = "route"
        return Reply(body=b"{}")

    def _models(self, call: Call, body: Any) -> Reply:
        call.responder = "route"
        data = {
            "object": "list",
            "data": [
                {"id": self.model, "object": "model", "created": self.created, "owned_by": "hermes-envs"}
            ],
        }
        call.response = data
        return Reply(body=_dumps(data).encode())

    def _chat(self, call: Call, body: Any) -> Reply:
        req = validate(ChatRequest, body, f"POST {call.route}")
        msgs = body["messages"]
        top_logprobs = (req.top_logprobs or 0) if req.logprobs else None
        view = RequestView(body)
        turn, index = self._respond(call, view, kind="chat")
        n = req.n or 1
        stream = bool(req.stream)
        call.stream = stream
        fault = self.injector.pick(turn.fault)
        call.fault = None if fault is None else (str(fault.code) if fault.is_status else fault.kind)
        early = self._transport_fault(fault, call)
        if early is not None and not early.delay:
            return early
        seq = next(self._seq)
        choice_turns = [(turn.choices[i % len(turn.choices)] if turn.choices else turn) for i in range(n)]
        messages = []
        for i, t in enumerate(choice_turns):
            msg, finish = self._message(t, seq, i, fault, view)
            messages.append((msg, finish))
        prompt_toks = self._count(" ".join(text_of(m.get("content")) for m in msgs if isinstance(m, Mapping)))
        completion_toks = sum(
            self._count(
                (m.get("content") or "")
                + "".join(tc["function"]["arguments"] for tc in m.get("tool_calls", []))
            )
            for m, _ in messages
        )
        usage = {
            "prompt_tokens": prompt_toks,
            "completion_tokens": completion_toks,
            "total_tokens": prompt_toks + completion_toks,
        }
        cid = f"chatcmpl-fake{seq}"
        model = body.get("model") or self.model
        empty = fault is not None and fault.kind == "empty_choices"
        logprobs = [
            None if top_logprobs is None else self._content_logprobs(m.get("content") or "", top_logprobs)
            for m, _ in messages
        ]
        completion = {
            "id": cid,
            "object": "chat.completion",
            "created": self.created,
            "model": model,
            "choices": []
            if empty
            else [
                {
                    "index": i,
                    "message": m,
                    "logprobs": None if lp is None else {"content": lp, "refusal": None},
                    "finish_reason": f,
                }
                for i, ((m, f), lp) in enumerate(zip(messages, logprobs, strict=True))
            ],
            "usage": usage,
            "system_fingerprint": None,
        }
        call.response = completion
        delay = early.delay if early is not None else 0.0
        if stream:
            opts = body.get("stream_options") if isinstance(body.get("stream_options"), Mapping) else {}
            chunks = self._chat_chunks(
                cid, model, [] if empty else messages, usage if opts.get("include_usage") else None, logprobs
            )
            return self._stream_reply(chunks, fault, delay)
        return self._body_reply(_dumps(completion).encode(), fault, delay)

    def _completions(self, call: Call, body: Any) -> Reply:
        req = validate(CompletionRequest, body, f"POST {call.route}")
        prompt = req.prompt
        prompt_text = (
            prompt if isinstance(prompt, str) else self._decode(prompt) if _is_ids(prompt) else str(prompt)
        )
        view = RequestView({**body, "messages": []}, prompt_text=prompt_text)
        turn, _ = self._respond(call, view, kind="text")
        fault = self.injector.pick(turn.fault)
        call.fault = None if fault is None else (str(fault.code) if fault.is_status else fault.kind)
        early = self._transport_fault(fault, call)
        if early is not None and not early.delay:
            return early
        n = req.n or 1
        seq = next(self._seq)
        texts = []
        for i in range(n):
            t = turn.choices[i % len(turn.choices)] if turn.choices else turn
            text, finish = self._text_of_turn(t, fault)
            texts.append((text, finish))
        ptoks = self._count(prompt_text)
        ctoks = sum(self._count(t) for t, _ in texts)
        usage = {"prompt_tokens": ptoks, "completion_tokens": ctoks, "total_tokens": ptoks + ctoks}
        cid = f"cmpl-fake{seq}"
        model = body.get("model") or self.model
        empty = fault is not None and fault.kind == "empty_choices"
        data = {
            "id": cid,
            "object": "text_completion",
            "created": self.created,
            "model": model,
            "choices": []
            if empty
            else [
                {"index": i, "text": t, "logprobs": None, "finish_reason": f}
                for i, (t, f) in enumerate(texts)
            ],
            "usage": usage,
            "system_fingerprint": None,
        }
        call.response = data
        delay = early.delay if early is not None else 0.0
        if body.get("stream"):
            call.stream = True
            base = {
                "id": cid,
                "object": "text_completion",
                "created": self.created,
                "model": model,
                "system_fingerprint": None,
            }
            chunks = []
            for i, (t, f) in enumerate([] if empty else texts):
                for p in _pieces(t, self.stream_chunk_chars):
                    chunks.append(
                        {
                            **base,
                            "choices": [{"index": i, "text": p, "logprobs": None, "finish_reason": None}],
                        }
                    )
                chunks.append(
                    {**base, "choices": [{"index": i, "text": "", "logprobs": None, "finish_reason": f}]}
                )
            opts = body.get("stream_options") if isinstance(body.get("stream_options"), Mapping) else {}
            if opts.get("include_usage"):
                chunks.append({**base, "choices": [], "usage": usage})
            return self._stream_reply(chunks, fault, delay)
        return self._body_reply(_dumps(data).encode(), fault, delay)

    def _generate(self, call: Call, body: Any) -> Reply:
        """vLLM (``prompt``) or SGLang (``input_ids`` / ``text`` + ``sampling_params``) native generation."""
        where = f"POST {call.route}"
        if not isinstance(body, Mapping):
            raise BadRequest(f"{where} body should be a JSON object; got {type(body).__name__}.")
        sglang = "input_ids" in body or "sampling_params" in body or "text" in body
        self._need_tokenizer(call)
        if sglang:
            sg = validate(SglangGenerateRequest, body, where)
            params = body.get("sampling_params") or {}
            sp = sg.sampling_params
            prompt_ids = (
                list(sg.input_ids) if sg.input_ids is not None else self.tokenizer.encode(sg.text or "")
            )
            n, max_toks = (sp.n if sp else None) or 1, sp.max_new_tokens if sp else None
        else:
            vl = validate(VllmGenerateRequest, body, where)
            p = vl.prompt
            prompt_ids = (
                list(p.get("prompt_token_ids") or []) if isinstance(p, dict) else self.tokenizer.encode(p)
            )
            params = body
            n, max_toks = vl.n or 1, vl.max_tokens
        prompt_text = self._decode(prompt_ids)
        view = RequestView(
            {"model": body.get("model"), "temperature": params.get("temperature"), "messages": []},
            prompt_text=prompt_text,
        )
        turn, _ = self._respond(call, view, kind="text")
        fault = self.injector.pick(turn.fault)
        call.fault = None if fault is None else (str(fault.code) if fault.is_status else fault.kind)
        early = self._transport_fault(fault, call)
        if early is not None and not early.delay:
            return early
        samples = []
        for i in range(n):
            t = turn.choices[i % len(turn.choices)] if turn.choices else turn
            text, finish = self._text_of_turn(t, fault)
            text_ids = list(self.tokenizer.encode(text, add_special_tokens=False)) if text else []
            out_ids = text_ids + self._end_of_turn(finish)
            if max_toks is not None and len(out_ids) > int(max_toks):
                out_ids, finish = out_ids[: int(max_toks)], "length"
            # Like vLLM: token_ids end with the end-of-turn token, `text` does not (special tokens skipped).
            samples.append(
                (self._decode(out_ids[: len(text_ids)]), out_ids, [_logprob(t_) for t_ in out_ids], finish)
            )
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
            data: Any = results[0] if n == 1 else results
        else:
            data = {
                "text": [s[0] for s in samples],
                "token_ids": [s[1] for s in samples],
                "prompt_token_ids": prompt_ids,
                "logprobs": [[[{str(tid): lp}] for tid, lp in zip(s[1], s[2], strict=True)] for s in samples],
                "finish_reasons": [s[3] for s in samples],
            }
        call.response = data
        return self._body_reply(_dumps(data).encode(), fault, early.delay if early is not None else 0.0)

    def _tokenize(self, call: Call, body: Any) -> Reply:
        call.responder = "route"
        self._need_tokenizer(call)
        req = validate(TokenizeRequest, body, f"POST {call.route}")
        if req.messages is not None:
            apply = getattr(self.tokenizer, "apply_chat_template", None)
            if apply is None:
                raise _Miss(
                    "POST /tokenize with messages needs a tokenizer with apply_chat_template.",
                    400,
                    "invalid_request",
                )
            out = apply(body["messages"], tokenize=True, add_generation_prompt=req.add_generation_prompt)
            ids = list(out["input_ids"] if hasattr(out, "keys") else out)
        else:
            ids = list(self.tokenizer.encode(req.prompt or "", add_special_tokens=req.add_special_tokens))
        data = {"count": len(ids), "max_model_len": 32768, "tokens": ids}
        call.response = data
        return Reply(body=_dumps(data).encode())

    def _detokenize(self, call: Call, body: Any) -> Reply:
        call.responder = "route"
        self._need_tokenizer(call)
        ids = validate(DetokenizeRequest, body, f"POST {call.route}").tokens
        data = {"prompt": self._decode(ids)}
        call.response = data
        return Reply(body=_dumps(data).encode())

    # ---------------------------------------------------------------------------------------- responders
    def _respond(self, call: Call, view: RequestView, kind: str) -> tuple[Turn, int | None]:
        """The turn answering this request (script first, then policy) or raise a miss."""
        problem: str | None = None
        if self.script is not None:
            found = self._select(view, kind)
            if isinstance(found, str):
                problem = f"{call.method} {call.route}: {found}"
            else:
                turn, index = found
                call.matched_turn, call.turn_index, call.responder = turn, index, "script"
                return turn, index
        if self.policy is not None:
            try:
                turn = turn_from_policy_result(self.policy(dict(view.body)))
            except Exception as e:  # the policy is user code: report it as a failure, not a server crash
                raise _Miss(
                    f"policy {getattr(self.policy, '__name__', self.policy)!r} should answer the request; "
                    f"it raised {type(e).__name__}: {e}",
                    500,
                    "policy_error",
                ) from None
            if kind == "chat":
                bad = _tool_problems(turn, view)
                if bad:
                    raise _Miss(
                        f"policy {getattr(self.policy, '__name__', '?')!r} answered with {turn.describe()}, "
                        f"but {bad}"
                    )
            call.matched_turn, call.responder = turn, "policy"
            return turn, None
        if problem is None:
            problem = (
                f"{call.method} {call.route} should be answered by a script or a policy; got a server with "
                "neither.\nFix: pass script=... or policy=... to FakeOpenAIServer."
            )
        raise _Miss(problem)

    def _select(self, view: RequestView, kind: str) -> tuple[Turn, int] | str:
        script = self.script
        assert script is not None
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
                    f"got {_short(prompt)}.\nFix: add a key matching this prompt, or check which item the env "
                    "sends."
                )
        k = view.assistant_count if kind == "chat" else self._text_position(view.prompt_text or "")
        if k >= len(script.turns):
            summary = _summary(view, kind)
            last = script.turns[-1] if script.turns else None
            near = f"\n  nearest expected turn (turn {len(script.turns)}): {last.describe()}" if last else ""
            return (
                f"Request should match scripted turn {k + 1} of {script.source} (the conversation already holds "
                f"{k} assistant message{'s' if k != 1 else ''}); got a request past the script's end: the script "
                f"has {len(script.turns)} turn{'s' if len(script.turns) != 1 else ''}.\n  request: {summary}{near}\n"
                "Fix: add a turn for this request, or check why the env asks again after the final answer "
                "(max_turns, a missing stop condition, or a retry after an error)."
            )
        turn = script.turns[k]
        diffs = turn.match.mismatches(view) if turn.match is not None else []
        if kind == "chat":
            tp = _tool_problems(turn, view)
            if tp:
                diffs.append(tp)
        if diffs:
            lines = "\n".join(f"  - {d}" for d in diffs)
            summary = _summary(view, kind)
            return (
                f"Request should match scripted turn {k + 1} of {script.source} ({turn.describe()}); got a "
                f"request that differs:\n{lines}\n  request: {summary}\n"
                "Fix: change the turn's match conditions or the env's request."
            )
        return turn, k

    def _text_position(self, prompt: str) -> int:
        marker = self.assistant_marker
        if not marker:
            return 0
        count = prompt.count(marker)
        if count and prompt.rstrip().endswith(marker):
            count -= 1
        return count

    # -------------------------------------------------------------------------------------------- builders
    def _message(
        self, turn: Turn, seq: int, choice: int, fault: Fault | None, view: RequestView
    ) -> tuple[dict[str, Any], str]:
        calls = [ToolCall(c.name, c.arguments, c.id) for c in turn.tool_calls]
        content = turn.content
        finish = turn.resolved_finish_reason
        if fault is not None:
            if fault.kind == "unknown_tool":
                if calls:
                    calls[0] = ToolCall(fault.tool_name, calls[0].arguments, calls[0].id)
                else:
                    calls = [ToolCall(fault.tool_name, "{}")]
                finish = "tool_calls"
            elif fault.kind == "invalid_tool_json":
                if not calls:
                    offered = view.tools_offered
                    calls = [ToolCall(offered[0] if offered else "terminal", "{}")]
                calls = [ToolCall(c.name, _break_json(c.arguments), c.id) for c in calls]
                finish = "tool_calls"
            elif fault.kind == "length":
                if calls:
                    last = calls[-1]
                    calls[-1] = ToolCall(
                        last.name, last.arguments[: max(1, len(last.arguments) // 2)], last.id
                    )
                elif content:
                    content = content[: len(content) // 2]
                finish = "length"
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
                    "id": c.id or f"call_fake{seq}_{choice}_{j}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for j, c in enumerate(calls)
            ]
        return msg, finish

    def _chat_chunks(
        self,
        cid: str,
        model: str,
        messages: list[tuple[dict[str, Any], str]],
        usage: dict[str, int] | None,
        logprobs: list[list[dict[str, Any]] | None] | None = None,
    ) -> list[dict[str, Any]]:
        base: dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": model,
            "system_fingerprint": None,
        }
        if usage is not None:
            base["usage"] = None
        size = self.stream_chunk_chars
        out: list[dict[str, Any]] = []

        def emit(i: int, delta: dict[str, Any], finish: str | None = None, lp: Any = None) -> None:
            out.append(
                {**base, "choices": [{"index": i, "delta": delta, "logprobs": lp, "finish_reason": finish}]}
            )

        for i, (msg, finish) in enumerate(messages):
            calls = msg.get("tool_calls") or []
            content = msg.get("content")
            first: dict[str, Any] = {
                "role": "assistant",
                "content": "" if content is not None else None,
                "refusal": None,
            }
            emit(i, first)
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
                emit(
                    i,
                    {
                        "tool_calls": [
                            {
                                "index": j,
                                "id": tc["id"],
                                "type": "function",
                                "function": {"name": tc["function"]["name"], "arguments": ""},
                            }
                        ]
                    },
                )
                for p in _pieces(tc["function"]["arguments"], size):
                    emit(i, {"tool_calls": [{"index": j, "function": {"arguments": p}}]})
            emit(i, {}, finish)
        if not messages:
            out.append({**base, "choices": []})
        if usage is not None:
            out.append({**base, "choices": [], "usage": usage})
        return out

    def _content_logprobs(self, text: str, top: int) -> list[dict[str, Any]]:
        """OpenAI ``logprobs.content`` for a message's content: one entry per token, deterministic values.

        Tokens come from the tokenizer when there is one (each id decoded alone), else from splitting the text
        into words and punctuation with their leading spaces. Their texts always join back into ``text``.
        """
        if not text:
            return []
        if self.tokenizer is not None:
            try:
                ids = list(self.tokenizer.encode(text, add_special_tokens=False))
            except TypeError:
                ids = list(self.tokenizer.encode(text))
            toks = [(self.tokenizer.decode([i]), _logprob(i)) for i in ids]
            if "".join(t for t, _ in toks) != text:  # a tokenizer whose single-id decode is lossy: use words
                toks = []
        else:
            toks = []
        if not toks:
            toks = [(t, _logprob(sum(map(ord, t)))) for t in _WORDS.findall(text)]
        out = []
        for tok, lp in toks:
            entry: dict[str, Any] = {"token": tok, "logprob": lp, "bytes": list(tok.encode("utf-8"))}
            alts = [(tok, lp)] + [(f"{tok}~{j}", round(lp - j, 4)) for j in range(1, top)]
            entry["top_logprobs"] = [
                {"token": t, "logprob": v, "bytes": list(t.encode("utf-8"))} for t, v in alts[:top]
            ]
            out.append(entry)
        return out

    def _text_of_turn(self, turn: Turn, fault: Fault | None) -> tuple[str, str]:
        """A turn rendered as raw model text in the ``tool_parser`` format, for completions and token routes."""
        calls = list(turn.tool_calls)
        if fault is not None and fault.kind == "unknown_tool":
            calls = [ToolCall(fault.tool_name, calls[0].arguments if calls else "{}")] + calls[1:]
        broken = fault is not None and fault.kind == "invalid_tool_json"
        text = (
            f"<think>\n{turn.reasoning_content}\n</think>\n" if turn.reasoning_content else ""
        ) + self._render(turn.content, calls, broken)
        finish = turn.finish_reason or "stop"
        if fault is not None and fault.kind == "length":
            text, finish = text[: len(text) // 2], "length"
        return text, finish

    def _render(self, content: str | None, calls: list[ToolCall], broken: bool) -> str:
        """Content and tool calls as the model would write them (the configured parser's ``render``)."""
        if not calls:
            return content or ""
        wire = [
            {
                "id": c.id or f"call_{i}",
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": _break_json(c.arguments) if broken else c.arguments,
                },
            }
            for i, c in enumerate(calls)
        ]
        if not broken:
            from hermes_envs.parsers import get_parser  # light: openai types only

            try:
                return get_parser(self.tool_parser).render(content or None, wire)
            except (KeyError, ValueError) as exc:  # unknown parser, or a turn the format cannot express
                raise _Miss(
                    f"the scripted turn cannot be written in the {self.tool_parser!r} tool-call format: {exc} "
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

    def _end_of_turn(self, finish: str) -> list[int]:
        """The end-of-turn token a real model emits when it stops on its own (none when cut by length)."""
        eos = getattr(self.tokenizer, "eos_token_id", None)
        return [int(eos)] if finish != "length" and isinstance(eos, int) else []

    # --------------------------------------------------------------------------------------------- faults
    def _transport_fault(self, fault: Fault | None, call: Call) -> Reply | None:
        if fault is None:
            return None
        if fault.kind == "status":
            code = int(fault.code or 500)
            call.status = code
            headers = {}
            if code in (429, 503):
                headers = {
                    "retry-after": _fmt_seconds(fault.retry_after),
                    "retry-after-ms": str(int(fault.retry_after * 1000)),
                }
            messages = {
                429: ("Rate limit reached (fake server fault).", "rate_limit_exceeded", "requests"),
                500: (
                    "The server had an error processing your request (fake server fault).",
                    "server_error",
                    "server_error",
                ),
                503: ("The server is overloaded (fake server fault).", "server_overloaded", "server_error"),
            }
            msg, err_code, typ = messages.get(
                code, (f"HTTP {code} (fake server fault).", "fault", "server_error")
            )
            return Reply(status=code, body=_error_body(msg, err_code, typ), headers=headers)
        if fault.kind == "drop":
            call.status = 0
            return Reply(drop=True)
        if fault.kind == "latency":
            return Reply(delay=fault.delay(self.injector.jitter_rng))
        return None

    def _body_reply(self, body: bytes, fault: Fault | None, delay: float) -> Reply:
        if fault is not None and fault.kind == "malformed_json":
            return Reply(body=body[: max(1, len(body) // 2)], delay=delay)
        if fault is not None and fault.kind == "truncated_sse":
            return Reply(body=body[: len(body) // 2], cut=True, declared_length=len(body), delay=delay)
        return Reply(body=body, delay=delay)

    def _stream_reply(self, chunks: list[dict[str, Any]], fault: Fault | None, delay: float) -> Reply:
        events = [b"data: " + _dumps(c).encode() + b"\n\n" for c in chunks]
        if fault is not None and fault.kind == "malformed_json" and events:
            mid = len(events) // 2
            events[mid] = events[mid][: len(events[mid]) // 2] + b"\n\n"
        if fault is not None and fault.kind == "truncated_sse":
            return Reply(
                content_type="text/event-stream",
                sse=events[: fault.after_chunks],
                cut=True,
                delay=delay,
                headers={"cache-control": "no-cache"},
            )
        events.append(b"data: [DONE]\n\n")
        return Reply(
            content_type="text/event-stream", sse=events, delay=delay, headers={"cache-control": "no-cache"}
        )

    # --------------------------------------------------------------------------------------------- tokens
    def _need_tokenizer(self, call: Call) -> None:
        if self.tokenizer is None:
            raise _Miss(
                f"POST {call.route} needs token ids, but the fake server has no tokenizer.\n"
                "Fix: pass tokenizer=... (any object with encode/decode, e.g. the offline tokenizer) to "
                "FakeOpenAIServer.",
                501,
                "no_tokenizer",
            )

    def _decode(self, ids: Any) -> str:
        if self.tokenizer is None:
            return " ".join(str(i) for i in ids)
        return self.tokenizer.decode(list(ids))

    def _count(self, text: str) -> int:
        if self.tokenizer is not None and text:
            try:
                return len(self.tokenizer.encode(text, add_special_tokens=False))
            except TypeError:
                return len(self.tokenizer.encode(text))
        return (len(text) + 3) // 4

    # ---------------------------------------------------------------------------------------------- state
    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.misses.clear()
        self.injector.reset()


_WORDS = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")


def _is_ids(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(i, int) for i in x)


def _logprob(token_id: int) -> float:
    return -round(0.01 * ((token_id % 50) + 1), 4)


def _break_json(args: str) -> str:
    return args[:-1] if len(args) > 2 and args.rstrip().endswith("}") else '{"arguments": '


def _fmt_seconds(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _short(s: Any, n: int = 120) -> str:
    if s is None:
        return "None"
    s = str(s)
    return repr(s if len(s) <= n else s[: n - 3] + "...")


def _summary(view: RequestView, kind: str) -> str:
    if kind != "chat":
        return f"prompt text ending {_short((view.prompt_text or '')[-120:])}"
    return (
        f"{len(view.messages)} messages, last role {view.last_role!r}, last user message {_short(view.last_user, 80)}, "
        f"tools offered {view.tools_offered!r}"
    )


def _tool_problems(turn: Turn, view: RequestView) -> str | None:
    if not turn.tool_calls:
        return None
    if turn.fault is not None and turn.fault.kind == "unknown_tool":
        return None
    choice = view.body.get("tool_choice")
    if choice == "none":
        return "tool_choice: the request set tool_choice='none' but the turn calls tools"
    offered = tool_names(view.body.get("tools"))
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


# ------------------------------------------------------------------------------------------------- aiohttp
def make_app(model: FakeModel) -> Any:
    """An aiohttp application serving ``model`` on every path (routing happens in FakeModel)."""
    from aiohttp import web

    async def handler(request: web.Request) -> web.StreamResponse:
        raw = await request.read() if request.can_read_body else b""
        reply = model.handle(request.method, request.path, raw)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.drop:
            _abort(request)
            raise asyncio.CancelledError  # aiohttp closes the handler quietly; the client sees a disconnect
        if reply.sse is not None:
            resp = web.StreamResponse(
                status=reply.status, headers={"Content-Type": reply.content_type, **reply.headers}
            )
            await resp.prepare(request)
            await resp.write(b"".join(reply.sse))
            if reply.cut:
                _abort(request)
                raise asyncio.CancelledError
            await resp.write_eof()
            return resp
        if reply.cut:
            resp = web.StreamResponse(
                status=reply.status,
                headers={"Content-Type": reply.content_type, "Content-Length": str(reply.declared_length)},
            )
            await resp.prepare(request)
            await resp.write(reply.body)
            _abort(request)
            raise asyncio.CancelledError
        return web.Response(
            status=reply.status,
            body=reply.body,
            content_type=reply.content_type,
            headers=reply.headers or None,
        )

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", handler)
    return app


def _abort(request: Any) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()
