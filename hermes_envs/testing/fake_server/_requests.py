"""The request bodies the fake server accepts, as pydantic models with the OpenAI / vLLM / SGLang wire names.

A request that does not fit is answered HTTP 400 and recorded as a failure (so ``assert_no_failures()`` names it),
never a crash: :func:`decode_body` refuses JSON nested deeper than :data:`MAX_JSON_DEPTH` before the recursive
decoder sees it, and the models refuse ``n`` outside 1..:data:`MAX_N`, non-finite numbers and wrong types.

The models type only the fields the server reads; every other field is allowed and kept (a real client sends many
we ignore: ``seed``, ``stop``, ``user`` ...). Responders keep reading the plain body dict, which is what is recorded
and what policies get.

The chat body, the one every rollout turn sends, is a TypedDict checked by a TypeAdapter compiled once: it only
checks the dict (no model instance with a copy of every extra field), about half the cost of a model.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, TypeVar

import pydantic_core
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from typing_extensions import Required, TypedDict

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_VALUES",
    "MAX_N",
    "BadRequest",
    "ChatRequest",
    "CompletionRequest",
    "DetokenizeRequest",
    "SglangGenerateRequest",
    "TokenizeRequest",
    "VllmGenerateRequest",
    "decode_body",
    "validate",
    "validate_chat",
]

MAX_N = 128
"""The most choices one request may ask for (``n``); OpenAI's own limit. More would only exhaust the server."""

MAX_JSON_DEPTH = 100
"""The deepest nesting of arrays and objects a body may have; real requests stay far below (about 20)."""

MAX_JSON_VALUES = 1_000_000
"""The most values (array items, object members, counted by their commas and brackets outside strings) a body may
hold: decoded, each costs 50 to 100 bytes, so 60 MB of ``{},{},...`` would take 1.5 GB. A 1,000-message history with
tool schemas holds under 100,000."""


class BadRequest(Exception):
    """A request body the server refuses (answered 400); ``message`` says what and how to fix it."""

    def __init__(self, message: str, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.message, self.code = message, code


# ----------------------------------------------------------------------------------------------------- decoding
_SPECIAL = re.compile(rb'[\[\]{}"\\]')


def _depth_over(raw: bytes, limit: int) -> bool:
    """Whether arrays/objects nest deeper than ``limit`` in ``raw`` (brackets inside strings do not count).

    Linear and non-recursive: it looks only at the bracket, quote and backslash bytes. Most bodies have fewer
    brackets than the limit in all, and are waved through by two ``bytes.count`` calls.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth, in_string, skip_to = 0, False, -1
    for m in _SPECIAL.finditer(raw):
        at = m.start()
        if at < skip_to:  # the character after a backslash inside a string
            continue
        c = raw[at]
        if in_string:
            if c == 0x5C:  # backslash: skip the escaped character
                skip_to = at + 2
            elif c == 0x22:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif c in (0x5D, 0x7D):
            depth -= 1
    return False


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def _values_over(raw: bytes, limit: int) -> bool:
    """Whether ``raw`` holds more than ``limit`` JSON values (commas and opening brackets outside strings).

    Two ``bytes.count`` calls wave through most bodies; only a body with that many commas and brackets in all has
    its strings blanked (one regex pass) and is counted again."""
    if raw.count(b",") + raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    bare = _STRING.sub(b'""', raw)
    return bare.count(b",") + bare.count(b"[") + bare.count(b"{") > limit


def decode_body(raw: bytes, method: str, path: str) -> Any:
    """The JSON body of ``method path`` (``{}`` when empty), or :class:`BadRequest` for invalid or too deeply
    nested JSON."""
    if not raw:
        return {}
    if len(raw) > MAX_JSON_VALUES and _values_over(raw, MAX_JSON_VALUES):
        raise BadRequest(
            f"{method} {path} body should hold at most {MAX_JSON_VALUES:,} JSON values (array items and object "
            f"members); got more in {len(raw):,} bytes.\nFix: send less data per request (a long chat history "
            "holds under 100,000); the cap keeps the server's memory bounded (docs/fake-server.md).",
            "invalid_json",
        )
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and _depth_over(raw, MAX_JSON_DEPTH):
        where = f"{method} {path}"
        raise BadRequest(
            f"{where} body should nest arrays and objects at most {MAX_JSON_DEPTH} deep; got a body nested "
            f"deeper ({len(raw)} bytes).\nFix: send a flatter body (real chat requests nest about 20 deep).",
            "invalid_json",
        )
    try:
        # pydantic-core's parser (jiter), about 4x the standard library's on a chat body; it refuses what the
        # standard library accepts beyond the JSON of real clients (a BOM, UTF-16, lone surrogates), and on
        # anything it refuses the standard library decides, so every body decodes (or fails) as it always did
        # (string values not interned: a history's texts rarely repeat within a body; about 10% off a long one)
        return pydantic_core.from_json(raw, cache_strings="keys")
    except ValueError:
        pass
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise BadRequest(
            f"{method} {path} body should be JSON; got {raw[:80]!r} ({e}).", "invalid_json"
        ) from None


# ------------------------------------------------------------------------------------------------------- models
Count = Annotated[StrictInt, Field(ge=1, le=MAX_N)]
Number = Annotated[float, Field(allow_inf_nan=False)]
TokenLimit = Annotated[StrictInt, Field(ge=0)]
TokenIds = list[StrictInt]


class _Body(BaseModel):
    model_config = ConfigDict(extra="allow", strict=False, allow_inf_nan=False)


# Messages and tools are TypedDicts, not models: a long history has hundreds of them, and checking a dict costs
# about half of building a model instance per item.
class Message(TypedDict, total=False):
    """One chat message: a role and (usually) content; tool calls and other fields pass through."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]
    role: Required[StrictStr]
    content: StrictStr | list[Any] | None


class Tool(TypedDict, total=False):
    """One entry of ``tools``: ``{"type": "function", "function": {"name": ...}}``."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]
    type: StrictStr
    function: dict[str, Any] | None


class StreamOptions(_Body):
    include_usage: StrictBool | None = None


class _Sampling(_Body):
    model: StrictStr | None = None
    n: Count | None = None
    stream: StrictBool | None = None
    stream_options: StreamOptions | None = None
    temperature: Number | None = None
    top_p: Number | None = None
    max_tokens: TokenLimit | None = None


class ChatRequest(TypedDict, total=False):
    """``POST /v1/chat/completions`` (a TypedDict: see the module docstring; checked by :func:`validate_chat`)."""

    __pydantic_config__ = ConfigDict(extra="allow", allow_inf_nan=False)  # type: ignore[misc]
    # in the order of the model it replaces (the sampling fields first), which is the order problems are listed in
    model: StrictStr | None
    n: Count | None
    stream: StrictBool | None
    stream_options: StreamOptions | None
    temperature: Number | None
    top_p: Number | None
    max_tokens: TokenLimit | None
    messages: Required[Annotated[list[Message], Field(min_length=1)]]
    tools: list[Tool] | None
    tool_choice: StrictStr | dict[str, Any] | None
    logprobs: StrictBool | None
    top_logprobs: Annotated[StrictInt, Field(ge=0, le=20)] | None
    max_completion_tokens: TokenLimit | None


_CHAT = TypeAdapter(ChatRequest).validator
# The one check across fields (top_logprobs needs logprobs) is made in Python after the type checks, as a model
# validator ran only once they passed: an AfterValidator would cost a call from Rust into Python on every request.


class CompletionRequest(_Sampling):
    """``POST /v1/completions``: ``prompt`` is text, token ids, or a list of texts."""

    prompt: StrictStr | TokenIds | list[StrictStr]
    logprobs: Annotated[StrictInt, Field(ge=0, le=20)] | None = None


class VllmGenerateRequest(_Sampling):
    """vLLM's native ``POST /generate``: ``prompt`` is text or ``{prompt_token_ids: [...]}``."""

    prompt: StrictStr | dict[str, Any]
    logprobs: StrictInt | None = None
    prompt_logprobs: Annotated[StrictInt, Field(ge=0, le=20)] | None = None

    @model_validator(mode="after")
    def _ids(self) -> VllmGenerateRequest:
        if isinstance(self.prompt, dict):
            ids = self.prompt.get("prompt_token_ids")
            if not isinstance(ids, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in ids
            ):
                raise ValueError(f"`prompt.prompt_token_ids` should be a list of token ids; got {ids!r}")
        return self


class SglangSampling(_Body):
    n: Count | None = None
    temperature: Number | None = None
    top_p: Number | None = None
    max_new_tokens: TokenLimit | None = None


class SglangGenerateRequest(_Body):
    """SGLang's native ``POST /generate``: ``input_ids`` or ``text``, plus ``sampling_params``."""

    model: StrictStr | None = None
    input_ids: TokenIds | None = None
    text: StrictStr | None = None
    sampling_params: SglangSampling | None = None


class TokenizeRequest(_Body):
    """``POST /tokenize``: ``prompt`` text, or chat ``messages``."""

    prompt: StrictStr | None = None
    messages: list[Message] | None = None
    add_special_tokens: StrictBool = True
    add_generation_prompt: StrictBool = True

    @model_validator(mode="after")
    def _one(self) -> TokenizeRequest:
        if self.prompt is None and self.messages is None:
            raise ValueError("the body should have `prompt` (a string) or `messages` (a list)")
        return self


class DetokenizeRequest(_Body):
    """``POST /detokenize``: ``tokens``."""

    tokens: TokenIds


# --------------------------------------------------------------------------------------------------- validation
M = TypeVar("M", bound=BaseModel)

_EXPECT = {
    "n": f"an integer from 1 to {MAX_N}",
    "sampling_params.n": f"an integer from 1 to {MAX_N}",
    "messages": "a non-empty list of messages",
    "messages[]": "a message object with a `role` (and usually `content`)",
    "messages[].role": "a string such as 'user' or 'assistant'",
    "messages[].content": "a string, a list of content parts, or null",
    "tools[]": "a tool object such as {'type': 'function', 'function': {'name': ...}}",
    "logprobs": "a boolean",
    "top_logprobs": "an integer from 0 to 20",
    "prompt_logprobs": "an integer from 0 to 20 (vLLM's default `--max-logprobs`)",
    "stream": "a boolean",
    "temperature": "a finite number",
    "top_p": "a finite number",
    "model": "a string",
    "tools": "a list of tools",
    "prompt": "a string, a list of token ids or a list of strings",
    "tokens": "a list of token ids",
    "input_ids": "a list of token ids",
    "max_tokens": "a non-negative integer",
    "max_new_tokens": "a non-negative integer",
    "max_completion_tokens": "a non-negative integer",
}
_FIX = {
    "n": f"send n as an integer from 1 to {MAX_N} (one choice per sample; the cap is the fake server's, "
    "documented in docs/fake-server.md)",
    "messages": "pass messages=[{'role': 'user', 'content': ...}]",
    "prompt_logprobs": "ask for at most 20 per position (e.g. an on-policy distillation env's `distill_topk: 20`); "
    "a real vLLM started without a larger `--max-logprobs` refuses more too",
}


def validate(model: type[M], body: Any, where: str) -> M:
    """``body`` validated as ``model``, or :class:`BadRequest` listing every problem (field, expectation, value)."""
    if not isinstance(body, dict):
        raise BadRequest(f"{where} body should be a JSON object; got {type(body).__name__}.")
    try:
        return model.model_validate(body)
    except ValidationError as e:
        raise BadRequest(_words(e, where)) from None


def validate_chat(body: Any, route: str) -> None:
    """Check the body of ``POST route`` as a chat body (:class:`ChatRequest`), or :class:`BadRequest` listing every
    problem.

    The body itself is what the server reads afterwards: every field it reads is strict, so its value in the
    body is the validated one. (``route``, not the ``where`` text: that is only built for a refusal.)"""
    if not isinstance(body, dict):
        raise BadRequest(f"POST {route} body should be a JSON object; got {type(body).__name__}.")
    try:
        _CHAT.validate_python(body)
    except ValidationError as e:
        raise BadRequest(_words(e, f"POST {route}")) from None
    top = body.get("top_logprobs")
    if top is not None and not body.get("logprobs"):
        raise BadRequest(
            f"POST {route} `top_logprobs` ({top!r}) should come with `logprobs: true`.\n"
            "Fix: pass logprobs=True with top_logprobs."
        )


def _words(err: ValidationError, where: str) -> str:
    problems, fixes = [], []
    seen: set[str] = set()
    for item in err.errors(include_url=False):
        loc = item["loc"]
        # a union reports once per member (``n.int``, ``prompt.str`` ...): keep the field's own path
        path = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in loc if not _is_member(p))
        path = path.replace(".[", "[")
        if path in seen or any(path.startswith(s + "[") or path.startswith(s + ".") for s in seen if s):
            continue  # a union member's complaint about the inside of a field already reported
        seen.add(path)
        if not path:  # a model-level check: its message says it all
            problem, _, fix = str(item["msg"]).removeprefix("Value error, ").partition(" Fix: ")
            problems.append(problem.rstrip("."))
            if fix:
                fixes.append(fix.rstrip("."))
            continue
        short = re.sub(r"\[\d+\]", "[]", path)
        expect = _EXPECT.get(short) or _EXPECT.get(short.rsplit(".", 1)[-1])
        got = "nothing" if item["type"] == "missing" else _got(item.get("input"))
        if expect is None:
            expect = str(item["msg"]).removeprefix("Value error, ")
            expect = expect[0].lower() + expect[1:] if expect else "valid"
            problems.append(f"`{path}`: {expect}; got {got}")
        else:
            problems.append(f"`{path}` should be {expect}; got {got}")
        known = _FIX.get(short.split("[", 1)[0].split(".", 1)[0]) or _FIX.get(short.rsplit(".", 1)[-1])
        if known and known not in fixes:
            fixes.append(known)
    head = problems[0] if len(problems) == 1 else f"{len(problems)} problems:\n  - " + "\n  - ".join(problems)
    fix = "; ".join(fixes) or "correct the field (see the OpenAI API reference for its type)"
    return f"{where} {head}.\nFix: {fix}."


def _is_member(p: Any) -> bool:
    """Whether a location part names a union member or a constraint (``int``, ``list[int]``, ``function-after``)."""
    return isinstance(p, str) and (
        p in ("int", "str", "float", "bool", "dict", "list") or "[" in p or "-" in p
    )


def _got(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # inf, nan: what json.loads made of 1e400 and NaN
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
