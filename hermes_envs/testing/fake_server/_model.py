"""FakeModel: routes a request ``(method, path, body bytes)`` to its responder and records it, without any I/O.

The same object serves real HTTP (``app.py``) and the in-process transport (``server.py``). Every request goes
through :meth:`FakeModel.handle`, which records it as a :class:`~.records.Call` first and turns every way a request
can fail (a bad body, a script miss, a raising policy, a bug) into a recorded error reply.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ._chat import chat_completion
from ._fault_effects import NO_FAULT
from ._faults import Fault, FaultInjector
from ._plan import Plan
from ._policies import Policy
from ._records import Call
from ._replies import Miss, Reply, dumps, error_body
from ._requests import BadRequest, DetokenizeRequest, TokenizeRequest, decode_body, validate
from ._responders import respond
from ._text import completion, generate
from ._tokens import TokenCounter, decode, need_tokenizer
from ._turns import Script
from ._view import RequestView

__all__ = ["FakeModel", "Plan"]

Route = Callable[["FakeModel", Call, Any], Reply]


class FakeModel:
    """The server's brain: thread-safe, I/O-free. One per FakeOpenAIServer.

    Thread-safe without a lock of its own: the records are lists, whose ``append`` and ``clear`` are atomic, and
    the fault counters have the injector's lock."""

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
        history: int | None = None,
    ) -> None:
        self.script = script
        self.tool_parser = tool_parser
        self.policy = policy
        self.strict = strict
        self.model = model
        self.tokenizer = tokenizer  # also sets self.count
        self.injector = FaultInjector(faults, seed=fault_seed)
        self.assistant_marker = assistant_marker
        self.stream_chunk_chars = max(1, stream_chunk_chars)
        # ``history``: keep the last N calls (and at least the last 100 misses) only, so a long-running server's
        # memory stays flat; None keeps everything (tests read the records).
        self.history = history
        self.calls: list[Call] | deque[Call] = [] if history is None else deque(maxlen=max(0, history))
        self.misses: list[str] | deque[str] = [] if history is None else deque(maxlen=max(100, history))
        self._received = itertools.count()  # next() is atomic: big bodies are handled in a worker thread
        self._missed = itertools.count()
        self.received = self.missed = 0
        self._seq = itertools.count(1)
        self.created = int(time.time())

    @property
    def tokenizer(self) -> Any:
        """The tokenizer for token routes and ``usage`` counts (None: counts are ``ceil(chars / 4)``)."""
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, value: Any) -> None:
        self._tokenizer = value
        self.count = TokenCounter(value)

    # ------------------------------------------------------------------------------------------------ entry
    def handle(self, method: str, path: str, raw: bytes) -> Reply:
        """Answer one request; it is recorded in :attr:`calls` whatever happens."""
        path = path.rstrip("/") or "/"
        call = Call(path, method, None)
        self.received = next(self._received) + 1
        self.calls.append(call)  # list.append is atomic: no lock (reset() swaps nothing, it clears in place)
        route = ROUTES.get((method, path))
        try:
            if route is None:
                known = sorted({p for _, p in ROUTES})
                raise Miss(
                    f"{method} {path} should be one of the fake server's routes; got an unknown route. "
                    f"Known routes: {', '.join(known)}.\nFix: check the base_url (it should end in /v1) and the "
                    "client's path.",
                    status=404,
                    code="unknown_route",
                )
            body = decode_body(raw, method, path) if method == "POST" else None
            call._body = body  # what the ``body`` setter does on a fresh call, without the call
            reply = route(self, call, body)
            call.seal(raw)
            return reply
        except BadRequest as b:
            return self._refuse(call, Miss(b.message, 400, b.code))
        except Miss as m:
            return self._refuse(call, m)
        except Exception as e:  # a bug or a user tokenizer/parser raising: a recorded 500, never a silent one
            return self._refuse(
                call,
                Miss(
                    f"{method} {path} should be answered; the fake server failed with {type(e).__name__}: {e}\n"
                    "Fix: if the traceback is in your policy or tokenizer, correct it; otherwise report a bug in "
                    "the fake server.",
                    500,
                    "fake_server_error",
                ),
            )

    def _refuse(self, call: Call, m: Miss) -> Reply:
        """Record the request as a miss (a failure for assert_no_failures()) and answer with its error."""
        call.status, call.error, call.responder = m.status, m.message, "miss"
        self.misses.append(m.message)
        self.missed = next(self._missed) + 1
        return Reply(status=m.status, body=error_body(m.message, m.code))

    def plan(self, call: Call, view: RequestView, kind: str) -> Plan | Reply:
        """The turn and the fault for a generation request, or the reply that replaces the answer (a status
        fault, a dropped connection). ``kind``: "chat" or "text" (see :func:`~.responders.respond`)."""
        turn, index = respond(call, view, kind, self.script, self.policy, self.assistant_marker)
        injector = self.injector
        fault = injector.pick(turn.fault) if turn.fault is not None or injector.faults else None
        if (
            fault is None
        ):  # what NO_FAULT's hooks answer (no label, no early reply, no delay), without the calls
            return Plan(turn, index, None, NO_FAULT, 0.0, next(self._seq))
        effect = fault.effect
        call.fault = effect.label(fault)
        early = effect.early_reply(fault)
        if early is not None:
            call.status = early.status
            return early
        return Plan(
            turn, index, fault, effect, effect.delay(fault, self.injector.jitter_rng), next(self._seq)
        )

    # ---------------------------------------------------------------------------------------------- state
    def reset(self) -> None:
        self.calls.clear()
        self.misses.clear()
        self._received, self._missed = itertools.count(), itertools.count()
        self.received = self.missed = 0
        self.injector.reset()


# -------------------------------------------------------------------------------------------- small routes
def _health(model: FakeModel, call: Call, body: Any) -> Reply:
    call.responder = "route"
    return Reply(body=b"{}")


def _models(model: FakeModel, call: Call, body: Any) -> Reply:
    call.responder = "route"
    entry = {"id": model.model, "object": "model", "created": model.created, "owned_by": "hermes-envs"}
    call.response = {"object": "list", "data": [entry]}
    return Reply(body=dumps(call.response))


def _tokenize(model: FakeModel, call: Call, body: Any) -> Reply:
    call.responder = "route"
    need_tokenizer(model.tokenizer, call)
    req = validate(TokenizeRequest, body, f"POST {call.route}")
    if req.messages is not None:
        apply = getattr(model.tokenizer, "apply_chat_template", None)
        if apply is None:
            raise BadRequest("POST /tokenize with messages needs a tokenizer with apply_chat_template.")
        out = apply(body["messages"], tokenize=True, add_generation_prompt=req.add_generation_prompt)
        ids = list(out["input_ids"] if hasattr(out, "keys") else out)
    else:
        ids = list(model.tokenizer.encode(req.prompt or "", add_special_tokens=req.add_special_tokens))
    call.response = {"count": len(ids), "max_model_len": 32768, "tokens": ids}
    return Reply(body=dumps(call.response))


def _detokenize(model: FakeModel, call: Call, body: Any) -> Reply:
    call.responder = "route"
    need_tokenizer(model.tokenizer, call)
    ids = validate(DetokenizeRequest, body, f"POST {call.route}").tokens
    call.response = {"prompt": decode(model.tokenizer, ids)}
    return Reply(body=dumps(call.response))


def _routes() -> dict[tuple[str, str], Route]:
    table: dict[tuple[str, str], Route] = {}
    for paths, method, route in (
        (("/v1/chat/completions", "/chat/completions"), "POST", chat_completion),
        (("/v1/completions", "/completions"), "POST", completion),
        (("/generate",), "POST", generate),
        (("/v1/models", "/models"), "GET", _models),
        (("/health", "/v1/health", "/health_generate"), "GET", _health),
        (("/tokenize", "/v1/tokenize"), "POST", _tokenize),
        (("/detokenize", "/v1/detokenize"), "POST", _detokenize),
    ):
        for path in paths:
            table[method, path] = route
    return table


ROUTES = _routes()
"""(method, path) -> responder; paths are matched after stripping a trailing slash."""
