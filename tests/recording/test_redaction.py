"""One test per redaction: secrets are replaced by a placeholder (never dropped) before a cassette is written."""

from __future__ import annotations

import json
import random
import string

import pytest
from vcr.request import Request

from hermes_envs.testing._redaction import PLACEHOLDER, Redactor

_RNG = random.Random(5)
# Built at run time from a seeded RNG: random enough to be a key, and no key-shaped literal in this file.
KEY = "sk-proj-" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(40))
HF = "hf_" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(34))


def _request(
    headers: dict[str, str], uri: str = "https://api.example.com/v1/chat/completions", body: bytes = b"{}"
):
    return Request("POST", uri, body, headers)


@pytest.fixture
def redactor() -> Redactor:
    return Redactor(environ={})


@pytest.mark.parametrize(
    ("header", "value", "expected"),
    [
        ("Authorization", f"Bearer {KEY}", "Bearer REDACTED"),
        ("authorization", "Basic dXNlcjpwYXNzd29yZA==", "Basic REDACTED"),
        ("api-key", "azure-key-123456", PLACEHOLDER),
        ("x-api-key", "anthropic-key-123456", PLACEHOLDER),
        ("OpenAI-Organization", "org-abcdef123456", PLACEHOLDER),
        ("OpenAI-Project", "proj_abcdef123456", PLACEHOLDER),
        ("Cookie", "session=abcdef; other=1", PLACEHOLDER),
    ],
)
def test_request_headers_are_replaced_not_dropped(
    redactor: Redactor, header: str, value: str, expected: str
) -> None:
    request = redactor.request(_request({header: value, "Content-Type": "application/json"}))
    assert request.headers[header] == expected
    assert request.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize("header", ["set-cookie", "openai-organization", "openai-project"])
def test_response_headers_are_replaced(redactor: Redactor, header: str) -> None:
    response = {
        "status": {"code": 200},
        "headers": {header: ["secret-value-123"], "x-request-id": ["req_1"]},
        "body": {"string": b"{}"},
    }
    out = redactor.response(response)
    assert out["headers"][header] == [PLACEHOLDER]
    assert out["headers"]["x-request-id"] == ["req_1"]


@pytest.mark.parametrize(
    "param", ["key", "api_key", "apiKey", "access_token", "token", "sig", "x-goog-api-key"]
)
def test_key_like_query_parameters_are_replaced(redactor: Redactor, param: str) -> None:
    request = redactor.request(
        _request({}, uri=f"https://api.example.com/v1/models?{param}=s3cr3tvalue&limit=5")
    )
    assert "s3cr3tvalue" not in request.uri
    assert f"{param}=REDACTED" in request.uri and "limit=5" in request.uri


def test_credentials_in_the_url_are_replaced(redactor: Redactor) -> None:
    request = redactor.request(_request({}, uri="https://user:hunter2hunter2@api.example.com/v1/x"))
    assert "hunter2" not in request.uri and "REDACTED@api.example.com" in request.uri


def test_response_bodies_are_scrubbed_of_known_values_and_key_shapes() -> None:
    redactor = Redactor(
        ["my-provider-secret-value"], environ={"OPENROUTER_API_KEY": "or-live-0123456789abcdef"}
    )
    body = (
        '{"echo": "my-provider-secret-value", "env": "or-live-0123456789abcdef", '
        f'"leak": "{KEY}", "hf": "{HF}", "answer": "42"}}'
    )
    out = redactor.response({"status": {"code": 200}, "headers": {}, "body": {"string": body.encode()}})
    text = out["body"]["string"].decode()
    for secret in ("my-provider-secret-value", "or-live-0123456789abcdef", KEY, HF):
        assert secret not in text
    assert '"answer": "42"' in text and text.count(PLACEHOLDER) == 4


def test_request_bodies_are_scrubbed_too(redactor: Redactor) -> None:
    request = redactor.request(_request({}, body=f'{{"api_key": "{KEY}", "model": "m"}}'.encode()))
    assert KEY.encode() not in request.body and b'"model": "m"' in request.body


def test_api_key_env_values_are_scrubbed_wherever_they_appear() -> None:
    redactor = Redactor(environ={"MY_PROVIDER_API_KEY": "plain-looking-value-987", "SHORT_API_KEY": "x"})
    assert redactor.text("a plain-looking-value-987 b x") == "a REDACTED b x"


def test_the_planted_corpus_is_redacted_without_the_key_in_the_environment(corpus) -> None:
    """Every planted secret a response body can carry (31: key shapes, named keys, base64, PEM, keys streamed
    across two SSE chunks) is gone from the stored body, read plain, joined or decoded (before: 14/31)."""
    exposed, redact = corpus.exposed, corpus.redact
    leaked = [
        p.name
        for p in corpus.redaction_cases()
        if exposed(p.value, redact(Redactor(environ={}), p.body or ""))
    ]
    assert leaked == []


def test_a_key_split_across_sse_chunks_is_replaced_once_in_the_joined_stream(corpus) -> None:
    body = corpus._sse_split(KEY, 12)
    stored = Redactor(environ={}).body(body.encode()).decode()
    joined = "".join(
        json.loads(b[6:])["choices"][0]["delta"]["content"]
        for b in stored.split("\n\n")
        if b.startswith("data: {")
    )
    assert joined == "the key is REDACTED ok"
