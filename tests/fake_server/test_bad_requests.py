"""Malformed requests: every one is answered 400 with a message, and recorded so assert_no_failures() fails."""

from __future__ import annotations

import httpx
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.fake_server._requests import MAX_JSON_DEPTH, MAX_N

USER = '[{"role": "user", "content": "hi"}]'


def _post(srv: FakeOpenAIServer, path: str, raw: str | bytes) -> httpx.Response:
    return httpx.post(srv.url + path, content=raw, headers={"content-type": "application/json"}, timeout=30)


def _assert_recorded_400(srv: FakeOpenAIServer, r: httpx.Response, *needles: str) -> str:
    assert r.status_code == 400, (r.status_code, r.text)
    message = r.json()["error"]["message"]
    for n in needles:
        assert n in message, (n, message)
    assert srv.calls[-1].status == 400 and srv.calls[-1].error == message
    with pytest.raises(AssertionError) as ei:
        srv.assert_no_failures()
    assert message in str(ei.value)
    return message


@pytest.mark.parametrize(
    ("n", "needle"),
    [
        ('"2"', "'2'"),
        ("[1, 2]", "[1, 2]"),
        ("1e400", "inf"),
        ("NaN", "nan"),
        ("-1", "-1"),
        ("0", "0"),
        ("2.5", "2.5"),
        ("true", "True"),
        (str(MAX_N + 1), str(MAX_N + 1)),
    ],
)
def test_bad_n_is_a_recorded_400_naming_the_field(n, needle):
    with FakeOpenAIServer(policy="answer") as srv:
        r = _post(srv, "/v1/chat/completions", f'{{"model": "m", "messages": {USER}, "n": {n}}}')
        _assert_recorded_400(srv, r, "`n`", f"1 to {MAX_N}", needle, "Fix:")


def test_n_at_the_cap_is_answered():
    with FakeOpenAIServer(policy="answer") as srv:
        r = _post(srv, "/v1/chat/completions", f'{{"model": "m", "messages": {USER}, "n": {MAX_N}}}')
        assert r.status_code == 200 and len(r.json()["choices"]) == MAX_N
        srv.assert_no_failures()


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deeply_nested_body_is_a_recorded_400(depth):
    raw = '{"model": "m", "messages": ' + USER[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}]}"
    with FakeOpenAIServer(policy="answer") as srv:
        r = _post(srv, "/v1/chat/completions", raw)
        _assert_recorded_400(srv, r, "nested", str(MAX_JSON_DEPTH), "Fix:")
        # the server still answers afterwards
        ok = _post(srv, "/v1/chat/completions", f'{{"model": "m", "messages": {USER}}}')
        assert ok.status_code == 200


def test_nesting_inside_strings_does_not_count():
    text = "[" * 5000
    with FakeOpenAIServer(policy="echo") as srv:
        r = _post(srv, "/v1/chat/completions", f'{{"messages": [{{"role": "user", "content": "{text}"}}]}}')
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == text


@pytest.mark.parametrize(
    ("path", "body", "needles"),
    [
        ("/v1/chat/completions", '{"messages": "hi"}', ["`messages`", "list"]),
        ("/v1/chat/completions", '{"messages": []}', ["`messages`", "non-empty"]),
        ("/v1/chat/completions", '{"messages": [{"content": "x"}]}', ["messages[0].role"]),
        ("/v1/chat/completions", '{"messages": [1]}', ["messages[0]"]),
        ("/v1/chat/completions", f'{{"messages": {USER}, "stream": "yes"}}', ["`stream`", "'yes'"]),
        ("/v1/chat/completions", f'{{"messages": {USER}, "temperature": NaN}}', ["`temperature`"]),
        ("/v1/chat/completions", f'{{"messages": {USER}, "temperature": "hot"}}', ["`temperature`"]),
        ("/v1/chat/completions", f'{{"messages": {USER}, "tools": {{}}}}', ["`tools`"]),
        ("/v1/chat/completions", f'{{"messages": {USER}, "model": 5}}', ["`model`"]),
        ("/v1/chat/completions", f'{{"messages": {USER}, "logprobs": 1}}', ["`logprobs`", "boolean"]),
        (
            "/v1/chat/completions",
            f'{{"messages": {USER}, "logprobs": true, "top_logprobs": 99}}',
            ["`top_logprobs`", "0 to 20"],
        ),
        ("/v1/chat/completions", "[1, 2]", ["JSON object"]),
        ("/v1/chat/completions", "{not json", ["should be JSON"]),
        ("/v1/completions", '{"model": "m"}', ["`prompt`"]),
        ("/v1/completions", '{"prompt": "hi", "n": "3"}', ["`n`", "'3'"]),
        ("/v1/completions", '{"prompt": "hi", "n": 1e400}', ["`n`", "inf"]),
    ],
)
def test_malformed_bodies_are_recorded_400s(path, body, needles):
    with FakeOpenAIServer(policy="answer") as srv:
        _assert_recorded_400(srv, _post(srv, path, body), *needles)


@pytest.mark.parametrize(
    "body",
    [
        '{"prompt": {"prompt_token_ids": [1, 2]}, "n": "2"}',
        '{"prompt": {"prompt_token_ids": [1, 2]}, "n": -1}',
        '{"input_ids": [1, 2], "sampling_params": {"n": 1e400}}',
        '{"input_ids": [1, 2], "sampling_params": {"max_new_tokens": "many"}}',
        '{"prompt": {"prompt_token_ids": [1, 2]}, "max_tokens": NaN}',
    ],
)
def test_malformed_generate_bodies_are_recorded_400s(char_tokenizer, body):
    with FakeOpenAIServer(policy="answer", tokenizer=char_tokenizer) as srv:
        _assert_recorded_400(srv, _post(srv, "/generate", body))


def test_in_process_transport_answers_bad_requests_the_same_way():
    with FakeOpenAIServer(policy="answer") as srv:
        client = httpx.Client(transport=srv.transport(httpx), base_url="http://x")
        r = client.post("/v1/chat/completions", content=f'{{"messages": {USER}, "n": "2"}}')
        assert r.status_code == 400 and "`n`" in r.json()["error"]["message"]
        assert len(srv.failures) == 1


def test_an_unexpected_error_in_a_responder_is_a_recorded_500():
    def broken_tokenizer_policy(body):
        return {"content": "x"}

    class Exploding:
        def encode(self, text, add_special_tokens=True):
            raise RuntimeError("boom")

        def decode(self, ids):
            return ""

    with FakeOpenAIServer(policy=broken_tokenizer_policy, tokenizer=Exploding()) as srv:
        r = _post(srv, "/v1/chat/completions", f'{{"messages": {USER}}}')
        assert r.status_code == 500 and "RuntimeError: boom" in r.json()["error"]["message"]
        assert srv.calls[-1].status == 500
        with pytest.raises(AssertionError, match="boom"):
            srv.assert_no_failures()
