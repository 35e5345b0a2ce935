"""Issue #28's planted keys: a real recording (use_cassette, httpx, a provider on 127.0.0.1) stores none of them, and
`lint-cassettes` finds each in a cassette that holds it. Before: 10 of 27 were stored readable and lint called the
file clean (SSE spelled `data:` / `event:` / `id:` + CRLF, percent- and base64-at-an-offset-encoded variable values,
key-bearing names in unlisted headers, query parameters, JSON fields and tool-call arguments)."""

from __future__ import annotations

import base64
import json
import random
import string
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from hermes_envs.testing import lint_paths, lint_text
from hermes_envs.testing.cassettes import use_cassette

_RNG = random.Random(28)
B62 = string.ascii_letters + string.digits


def _r(n: int, alphabet: str = B62) -> str:
    while True:
        out = "".join(_RNG.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in out) and any(c.isupper() for c in out) and any(c.islower() for c in out):
            return out


# Built at run time (seeded): random enough to be credentials, and no key-shaped literal in this file.
SSE_KEYS = {v: "sk-proj-" + _r(48) for v in ("nospace", "event", "id_crlf")}
SECRET_KEY_VALUE = _r(20) + "/+=" + _r(12)  # a *_SECRET_KEY value with characters percent-encoding changes
API_KEY_VALUE = _r(32)  # a *_API_KEY value without any key shape
ENVIRON = {"PLANTED_SECRET_KEY": SECRET_KEY_VALUE, "PLANTED_API_KEY": API_KEY_VALUE}
NAMED = {
    "X-Portkey-Api-Key": _r(32),  # request header
    "accessKey": _r(32),  # query parameter
    "token": _r(40),  # JSON field of a response
    "X-Session-Key": _r(32),  # response header
    "tool_token": _r(36),  # a token inside a tool call's arguments, in a request
}


def _chunks(key: str, variant: str) -> bytes:
    text = f"your key is {key} ok"
    pieces = [text[i : i + 5] for i in range(0, len(text), 5)]
    out = []
    for n, piece in enumerate(pieces):
        event = json.dumps({"id": "c", "choices": [{"index": 0, "delta": {"content": piece}}]})
        if variant == "nospace":
            out.append(f"data:{event}\n\n")
        elif variant == "event":
            out.append(f"event: message\ndata: {event}\n\n")
        else:
            out.append(f"id: {n}\r\ndata: {event}\r\n\r\n")
    return ("".join(out) + "data: [DONE]\n\n").encode()


def _b64_at(offset: int) -> str:
    return base64.b64encode(("x" * offset + "PLANTED_API_KEY=" + API_KEY_VALUE + " end").encode()).decode()


def _reply(variant: str) -> tuple[str, bytes, dict[str, str]]:
    if variant in SSE_KEYS:
        return "text/event-stream", _chunks(SSE_KEYS[variant], variant), {}
    content = {
        "percent": f"callback?state={quote(SECRET_KEY_VALUE, safe='')}",
        "b64_1": _b64_at(1),
        "b64_2": _b64_at(2),
    }.get(variant, "ok")
    body: dict = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    headers = {}
    if variant == "token":
        body["token"] = NAMED["token"]
    if variant == "session":
        headers["X-Session-Key"] = NAMED["X-Session-Key"]
    return "application/json", json.dumps(body).encode(), headers


class _Provider(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        kind, payload, headers = _reply(body["variant"])
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _every_form(value: str) -> list[str]:
    from hermes_envs.testing.secret_rules import encoded_forms

    return [value, *encoded_forms(value)]


def _planted() -> list[str]:
    return [*SSE_KEYS.values(), SECRET_KEY_VALUE, API_KEY_VALUE, *NAMED.values()]


def test_a_recording_stores_none_of_the_planted_keys(
    provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENVIRON.items():
        monkeypatch.setenv(name, value)
    cassette = tmp_path / "planted.yaml"
    variants = [*SSE_KEYS, "percent", "b64_1", "b64_2", "token", "session", "header", "query", "tool_call"]
    with use_cassette(cassette, "rewrite") as session, httpx.Client() as client:
        for variant in variants:
            body: dict = {"model": "m", "variant": variant, "messages": [{"role": "user", "content": "q"}]}
            headers, url = {}, provider + "/chat/completions"
            if variant == "header":
                headers["X-Portkey-Api-Key"] = NAMED["X-Portkey-Api-Key"]
            if variant == "query":
                url += f"?accessKey={NAMED['accessKey']}"
            if variant == "tool_call":
                arguments = json.dumps({"url": "https://api.example.com", "token": NAMED["tool_token"]})
                call = {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "fetch", "arguments": arguments},
                }
                body["messages"].append({"role": "assistant", "content": None, "tool_calls": [call]})
            assert client.post(url, json=body, headers=headers).status_code == 200
    assert not session.failures and not session.findings, (session.failures, session.findings)
    stored = cassette.read_text()
    exposed = [v for v in _planted() if any(form in stored for form in _every_form(v))]
    joined = "".join(stored.split())  # a key kept in 5-character pieces, one per event line
    exposed += [v for v in SSE_KEYS.values() if v[8:24] in joined.replace("'", "").replace('"', "")]
    assert exposed == [], "stored readable: " + ", ".join(v[:6] + "…" for v in exposed)
    assert stored.count("REDACTED") >= len(_planted())
    assert lint_paths([cassette], environ=ENVIRON) == []


def _cassette_text(variant: str) -> str:
    """A cassette holding one planted key the way an unredacted recording would store it."""
    import yaml

    request: dict = {
        "method": "POST",
        "uri": "https://api.example.com/v1/chat/completions",
        "body": "{}",
        "headers": {},
    }
    response: dict = {"status": {"code": 200}, "headers": {}, "body": {"string": "{}"}}
    if variant in SSE_KEYS:
        events = _chunks(SSE_KEYS[variant], variant).decode().replace("\r\n", "\n").split("\n\n")
        response["body"] = {"string": {"sse": [e for e in events if e]}}
    elif variant in ("percent", "b64_1", "b64_2", "token"):
        response["body"] = {"string": {"json": json.loads(_reply(variant)[1])}}
    elif variant == "session":
        response["headers"] = {"X-Session-Key": [NAMED["X-Session-Key"]]}
    elif variant == "header":
        request["headers"] = {"X-Portkey-Api-Key": [NAMED["X-Portkey-Api-Key"]]}
    elif variant == "query":
        request["uri"] += f"?accessKey={NAMED['accessKey']}"
    elif variant == "tool_call":
        arguments = json.dumps({"token": NAMED["tool_token"]})
        call = {"id": "call_1", "function": {"name": "fetch", "arguments": arguments}}
        request["body"] = {"json": {"messages": [{"role": "assistant", "tool_calls": [call]}]}}
    return yaml.safe_dump({"interactions": [{"request": request, "response": response}]}, sort_keys=False)


@pytest.mark.parametrize(
    "variant", [*SSE_KEYS, "percent", "b64_1", "b64_2", "token", "session", "header", "query", "tool_call"]
)
def test_lint_finds_each_planted_key(variant: str) -> None:
    text = _cassette_text(variant)
    assert lint_text(text, "c.yaml", environ=ENVIRON), text


def test_lint_finds_aws_key_ids_without_a_digit() -> None:
    """About 3.6% of real AWS access key ids have no digit (AKIA + 16 of A-Z2-7); before, the rule needed one."""
    rng = random.Random(36)
    ids = ["AKIA" + "".join(rng.choice(string.ascii_uppercase) for _ in range(16)) for _ in range(300)]
    found = sum(1 for i in ids if lint_text(f"aws: {i}\n", environ={}))
    assert found >= 0.95 * len(ids), f"{found} of {len(ids)}"
    for prose in ("AKIAPOLYNESIANISLAND is a made-up word", "AKIAEXAMPLEKEYEXAMPL appears in docs"):
        assert lint_text(prose, environ={}) == []
