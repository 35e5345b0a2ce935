"""What a chat request is recorded and answered as, whichever JSON parser decoded it and however it was encoded."""

from __future__ import annotations

import json

import httpx
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer

USER = [{"role": "user", "content": "hi"}]


def _post(srv: FakeOpenAIServer, raw: bytes) -> httpx.Response:
    return httpx.post(
        srv.base_url + "/chat/completions",
        content=raw,
        headers={"content-type": "application/json"},
        timeout=30,
    )


@pytest.mark.parametrize(
    "raw",
    [
        # JSON the standard library takes and pydantic-core refuses: both must still be answered
        b'\xef\xbb\xbf{"messages": [{"role": "user", "content": "hi"}]}',  # a UTF-8 byte-order mark
        b'{"messages": [{"role": "user", "content": "hi"}], "user": "\\ud800"}',  # a lone surrogate
        '{"messages": [{"role": "user", "content": "hi"}], "user": "é"}'.encode("utf-16"),
    ],
    ids=["bom", "lone-surrogate", "utf-16"],
)
def test_bodies_the_fast_parser_refuses_are_answered_and_recorded_as_before(raw):
    with FakeOpenAIServer(policy="echo") as srv:
        r = _post(srv, raw)
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["message"]["content"] == "hi"
        assert srv.calls[-1].body == json.loads(raw)
        srv.assert_no_failures()


def test_the_recorded_response_is_the_answer_the_client_got():
    with FakeOpenAIServer(policy="answer:text=ok") as srv:
        r = _post(srv, json.dumps({"model": "m", "messages": USER, "temperature": 1}).encode())
        call = srv.calls[-1]
        assert call.response == r.json()
        assert call.response["choices"][0]["message"]["content"] == "ok"
        assert call.body["temperature"] == 1 and isinstance(call.body["temperature"], int)  # as sent, not 1.0


def test_a_garbled_answer_is_recorded_as_the_answer_before_the_fault():
    turn = {"content": "fine", "fault": {"kind": "malformed_json"}}
    with FakeOpenAIServer([turn]) as srv:
        r = _post(srv, json.dumps({"messages": USER}).encode())
        with pytest.raises(ValueError):
            json.loads(r.content)
        call = srv.calls[-1]
        assert call.fault == "malformed_json"
        assert call.response["choices"][0]["message"]["content"] == "fine"


def test_a_chat_body_with_several_problems_lists_them_in_field_order():
    with FakeOpenAIServer(policy="answer") as srv:
        r = _post(srv, b'{"messages": [], "n": 0, "model": 5}')
        assert r.status_code == 400
        message = r.json()["error"]["message"]
        assert "3 problems" in message
        assert message.index("`model`") < message.index("`n`") < message.index("`messages`")
        assert srv.calls[-1].status == 400 and srv.calls[-1].error == message
