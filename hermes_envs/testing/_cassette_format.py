"""The cassette file format: readable bodies (JSON as YAML structures, SSE as one entry per event) turned back
into bytes on replay, the vcrpy YAML serializer, and reading a cassette back (:func:`load_cassette`,
:func:`reply_of`). Shared by the session (:mod:`hermes_envs.testing.cassettes`), drift and the rollout runner.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hermes_envs.testing._cassette_matching as matching
from hermes_envs.errors import HermesEnvsError

__all__ = [
    "RECORD_FLAG",
    "CassetteError",
    "CassetteMissError",
    "HermesYamlSerializer",
    "Interaction",
    "content_type",
    "load_cassette",
    "parse_yaml",
    "readable_body",
    "reply_of",
    "request_value",
]

RECORD_FLAG = "pytest --hermes-record"


class CassetteError(HermesEnvsError, ValueError):
    """A cassette cannot be used (unreadable file, a secret in it, a bad record mode)."""


class CassetteMissError(HermesEnvsError, LookupError):
    """A request made during replay is not in the cassette (nothing was sent over the network)."""


def _sse_events(text: str) -> list[Any]:
    events: list[Any] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        if block.startswith("data: ") and "\n" not in block:
            try:
                value = json.loads(block[6:])
            except ValueError:
                value = None
            if isinstance(value, (dict, list)):
                events.append(value)
                continue
        events.append(block)
    return events


def _sse_text(events: list[Any]) -> str:
    blocks = [
        "data: " + json.dumps(e, ensure_ascii=False, separators=(",", ":"))
        if isinstance(e, (dict, list))
        else e
        for e in events
    ]
    return "".join(b + "\n\n" for b in blocks)


def content_type(headers: dict[str, Any]) -> str:
    for name, value in (headers or {}).items():
        if name.lower() == "content-type":
            return str(value[0] if isinstance(value, list) and value else value).lower()
    return ""


def readable_body(text: Any, content_type: str = "") -> Any:
    if not isinstance(text, str):
        return text
    if "text/event-stream" in content_type or text.startswith("data: "):
        return {"sse": _sse_events(text)}
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return {"json": json.loads(stripped)}
        except ValueError:
            pass
    return text


def _raw_body(body: Any) -> Any:
    if isinstance(body, dict) and set(body) == {"json"}:
        return json.dumps(body["json"], ensure_ascii=False, separators=(",", ":"))
    if isinstance(body, dict) and set(body) == {"sse"}:
        return _sse_text(body["sse"])
    return body


def _set_length(headers: dict[str, Any], body: Any) -> None:
    for name in list(headers or {}):
        if name.lower() == "content-length" and isinstance(body, str):
            n = str(len(body.encode("utf-8")))
            headers[name] = [n] if isinstance(headers[name], list) else n


class HermesYamlSerializer:
    """vcrpy serializer: YAML with JSON bodies as structures and SSE bodies as a list of events; the recorded tool
    calls (kept by vcrpy in the metadata) as a top-level ``tool_calls:`` section, in a stable order."""

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> str:
        import yaml

        from hermes_envs.testing._tool_cassette import TOOL_CALLS_KEY, sort_entries

        data = json.loads(json.dumps(cassette_dict, default=str))  # plain containers, own copy
        meta = data.pop("metadata", None) or {}
        tool_calls = meta.pop(TOOL_CALLS_KEY, None)
        if tool_calls:
            data[TOOL_CALLS_KEY] = sort_entries(tool_calls)
        if meta:
            data["metadata"] = meta  # last in the file, as before
        for it in data.get("interactions", []):
            req, resp = it["request"], it["response"]
            req["body"] = readable_body(req.get("body"))
            body = resp.get("body") or {}
            if "string" in body:
                body["string"] = readable_body(body["string"], content_type(resp.get("headers") or {}))
        return yaml.dump(data, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=120)

    @staticmethod
    def deserialize(cassette_string: str) -> dict[str, Any]:
        parsed = parse_yaml(cassette_string)
        interactions = []
        for it in parsed.get("interactions") or []:  # new containers: the parsed cache stays pristine
            req = dict(it["request"])
            resp = dict(it["response"])
            req["body"] = _raw_body(req.get("body"))
            resp["headers"] = {
                k: list(v) if isinstance(v, list) else v for k, v in (resp.get("headers") or {}).items()
            }
            body = dict(resp.get("body") or {})
            if "string" in body:
                body["string"] = _raw_body(body["string"])
                _set_length(resp["headers"], body["string"])
            resp["body"] = body
            interactions.append({"request": req, "response": resp})
        out = {**parsed, "interactions": interactions}
        tool_calls = out.pop("tool_calls", None)
        if tool_calls:  # vcrpy keeps it with the metadata (saved again on the next recording)
            out["metadata"] = {**(out.get("metadata") or {}), "tool_calls": list(tool_calls)}
        return out


@functools.lru_cache(maxsize=16)
def parse_yaml(text: str) -> dict[str, Any]:
    """The parsed YAML of a cassette, cached by content (treat as read-only): a replayed run parses it once."""
    import yaml

    try:
        return yaml.load(text, Loader=_loader()) or {}
    except yaml.YAMLError as exc:
        raise CassetteError(f"cassette should be YAML; got a parse error: {exc}") from None


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _make_dumper() -> Any:
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Dumper(base):  # type: ignore[misc, valid-type]
        pass

    def str_rep(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value and len(value) < 20000 and value == value.strip(" ") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, str_rep)
    return Dumper


_DUMPER: Any = None


def _dumper() -> Any:
    global _DUMPER
    if _DUMPER is None:
        _DUMPER = _make_dumper()
    return _DUMPER


# ================================================================================================ reading
@dataclass
class Interaction:
    """One recorded request and its response, bodies parsed (JSON value, list of SSE events, or text)."""

    method: str
    uri: str
    request: Any
    status: int
    response: Any
    headers: dict[str, Any] = field(default_factory=dict)

    @property
    def endpoint(self) -> str:
        return matching.endpoint(self.uri)

    @property
    def raw_request(self) -> str | None:
        body = _raw_body(self.request)
        return body if isinstance(body, str) or body is None else str(body)


def load_cassette(path: str | Path) -> tuple[list[Interaction], dict[str, Any]]:
    """The interactions and metadata of a cassette written by hermes-envs (or a plain vcrpy YAML cassette)."""
    p = Path(path)
    try:
        data = parse_yaml(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CassetteError(
            f"cassette {p} should exist; it does not. Fix: record it once with `{RECORD_FLAG}` (or "
            "`hermes-envs record ENV_FILE ...`), or check the path."
        ) from None
    except CassetteError as exc:
        raise CassetteError(f"{p}: {exc}") from None
    out = []
    for it in data.get("interactions") or []:
        req, resp = it.get("request") or {}, it.get("response") or {}
        body = (resp.get("body") or {}).get("string")
        headers = resp.get("headers") or {}
        out.append(
            Interaction(
                method=str(req.get("method", "")),
                uri=str(req.get("uri", "")),
                request=readable_body(req.get("body"))
                if isinstance(req.get("body"), str)
                else req.get("body"),
                status=int((resp.get("status") or {}).get("code", 0)),
                response=readable_body(body, content_type(headers)) if isinstance(body, str) else body,
                headers=headers,
            )
        )
    return out, dict(data.get("metadata") or {})


def request_value(body: Any) -> Any:
    if isinstance(body, dict) and set(body) == {"json"}:
        return body["json"]
    return body


def reply_of(response: Any) -> dict[str, Any] | None:
    """The first choice of a recorded chat response (JSON or SSE) as a fake-server turn
    (``content``, ``tool_calls`` [{id, name, arguments}], ``finish_reason``, ``reasoning_content``), plus ``usage``."""
    if isinstance(response, dict) and "json" in response:
        data = response["json"]
        if not isinstance(data, dict) or not data.get("choices"):
            return None
        choice = data["choices"][0]
        msg = choice.get("message") or {}
        calls = [
            {
                "id": tc.get("id"),
                "name": (tc.get("function") or {}).get("name"),
                "arguments": (tc.get("function") or {}).get("arguments"),
            }
            for tc in msg.get("tool_calls") or []
        ]
        turn = {
            "content": msg.get("content"),
            "tool_calls": calls,
            "finish_reason": choice.get("finish_reason"),
        }
        if msg.get("reasoning_content"):
            turn["reasoning_content"] = msg["reasoning_content"]
        turn["usage"] = data.get("usage")
        return turn
    if isinstance(response, dict) and "sse" in response:
        content: list[str] = []
        reasoning: list[str] = []
        calls_by_index: dict[int, dict[str, Any]] = {}
        finish = None
        usage = None
        for event in response["sse"]:
            if not isinstance(event, dict):
                continue
            usage = event.get("usage") or usage
            for choice in event.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    content.append(delta["content"])
                if delta.get("reasoning_content"):
                    reasoning.append(delta["reasoning_content"])
                for tc in delta.get("tool_calls") or []:
                    slot = calls_by_index.setdefault(
                        tc.get("index", 0), {"id": None, "name": "", "arguments": ""}
                    )
                    slot["id"] = tc.get("id") or slot["id"]
                    fn = tc.get("function") or {}
                    slot["name"] += fn.get("name") or ""
                    slot["arguments"] += fn.get("arguments") or ""
                finish = choice.get("finish_reason") or finish
        turn = {
            "content": "".join(content) if content else (None if calls_by_index else ""),
            "tool_calls": [calls_by_index[i] for i in sorted(calls_by_index)],
            "finish_reason": finish,
            "usage": usage,
        }
        if reasoning:
            turn["reasoning_content"] = "".join(reasoning)
        return turn
    return None
