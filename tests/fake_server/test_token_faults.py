"""Faults on the token routes (vLLM and SGLang ``/generate``), through aiohttp as atroposlib sends them."""

from __future__ import annotations

import json
import re
import time

import aiohttp
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer

CALL = {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}]}


def _body(flavour: str, tok) -> dict:
    ids = tok.encode("<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n")
    if flavour == "vllm":
        return {"prompt": {"prompt_token_ids": ids}, "logprobs": 0, "n": 1, "max_tokens": 200}
    return {"input_ids": ids, "sampling_params": {"max_new_tokens": 200}, "return_logprob": True}


def _text_and_finish(flavour: str, data: dict, tok) -> tuple[str, str]:
    """The generated text (from the token ids, as a trainer sees it) and the finish reason."""
    if flavour == "vllm":
        ids = [int(next(iter(p[0]))) for p in data["logprobs"][0]]
        return tok.decode(ids), data["finish_reasons"][0]
    ids = [t[1] for t in data["meta_info"]["output_token_logprobs"]]
    return tok.decode(ids), data["meta_info"]["finish_reason"]["type"]


def _tool_json(text: str) -> str:
    m = re.search(r"<tool_call>\n(.*)\n</tool_call>", text, re.S)
    assert m, text
    return m.group(1)


async def _post(url: str, body: dict) -> tuple[int, dict, dict]:
    async with aiohttp.ClientSession() as s, s.post(url + "/generate", json=body) as resp:
        return resp.status, dict(resp.headers), await resp.json(content_type=None)


@pytest.fixture(params=["vllm", "sglang"])
def flavour(request) -> str:
    return request.param


@pytest.mark.parametrize(
    ("code", "err"), [(429, "rate_limit_exceeded"), (500, "server_error"), (503, "server_overloaded")]
)
async def test_status_faults_then_the_retry_is_answered(flavour, char_tokenizer, code, err):
    async with FakeOpenAIServer(
        [{**CALL, "fault": {"kind": code, "retry_after": 2}}], tokenizer=char_tokenizer
    ) as srv:
        status, headers, data = await _post(srv.url, _body(flavour, char_tokenizer))
        assert status == code and data["error"]["code"] == err
        if code != 500:
            assert headers["Retry-After"] == "2" and headers["retry-after-ms"] == "2000"
        status, _, data = await _post(srv.url, _body(flavour, char_tokenizer))
        assert status == 200
        text, finish = _text_and_finish(flavour, data, char_tokenizer)
        assert json.loads(_tool_json(text)) == {"name": "terminal", "arguments": {"command": "echo 42"}}
        assert finish == "stop"
        assert [c.status for c in srv.calls_to("/generate")] == [code, 200]
        srv.assert_no_failures()


async def test_latency(flavour, char_tokenizer):
    script = [{"content": "ok", "fault": {"kind": "latency", "seconds": 0.1}}]
    async with FakeOpenAIServer(script, tokenizer=char_tokenizer) as srv:
        t0 = time.monotonic()
        status, _, data = await _post(srv.url, _body(flavour, char_tokenizer))
        assert status == 200 and time.monotonic() - t0 >= 0.09
        assert _text_and_finish(flavour, data, char_tokenizer) == ("ok", "stop")
        assert srv.calls_to("/generate")[0].fault == "latency"


async def test_dropped_connection(flavour, char_tokenizer):
    async with FakeOpenAIServer([{**CALL, "fault": "drop"}], tokenizer=char_tokenizer) as srv:
        with pytest.raises(aiohttp.ClientConnectionError):
            await _post(srv.url, _body(flavour, char_tokenizer))
        assert srv.calls_to("/generate")[0].fault == "drop"


async def test_length_cuts_the_tool_call(flavour, char_tokenizer):
    async with FakeOpenAIServer([{**CALL, "fault": "length"}], tokenizer=char_tokenizer) as srv:
        _, _, data = await _post(srv.url, _body(flavour, char_tokenizer))
    text, finish = _text_and_finish(flavour, data, char_tokenizer)
    assert finish == "length"
    assert text.startswith("<tool_call>") and "</tool_call>" not in text


async def test_invalid_tool_json(flavour, char_tokenizer):
    async with FakeOpenAIServer([{**CALL, "fault": "invalid_tool_json"}], tokenizer=char_tokenizer) as srv:
        _, _, data = await _post(srv.url, _body(flavour, char_tokenizer))
    text, finish = _text_and_finish(flavour, data, char_tokenizer)
    assert finish == "stop"
    with pytest.raises(ValueError):
        json.loads(_tool_json(text))


async def test_unknown_tool(flavour, char_tokenizer):
    script = [{**CALL, "fault": {"kind": "unknown_tool", "tool_name": "rm_rf"}}]
    async with FakeOpenAIServer(script, tokenizer=char_tokenizer) as srv:
        _, _, data = await _post(srv.url, _body(flavour, char_tokenizer))
    text, _ = _text_and_finish(flavour, data, char_tokenizer)
    assert json.loads(_tool_json(text))["name"] == "rm_rf"


async def test_server_wide_rate_fault_on_generate_is_seeded(flavour, char_tokenizer):
    async def statuses() -> list[int]:
        async with FakeOpenAIServer(
            [{"content": "ok"}], tokenizer=char_tokenizer, faults=["500:rate=0.5"], fault_seed=7
        ) as srv:
            return [(await _post(srv.url, _body(flavour, char_tokenizer)))[0] for _ in range(12)]

    first = await statuses()
    assert set(first) == {200, 500} and await statuses() == first


async def test_malformed_and_truncated_bodies(flavour, char_tokenizer):
    async with FakeOpenAIServer([{**CALL, "fault": "malformed_json"}], tokenizer=char_tokenizer) as srv:
        async with aiohttp.ClientSession() as s:
            async with s.post(srv.url + "/generate", json=_body(flavour, char_tokenizer)) as resp:
                assert resp.status == 200
                with pytest.raises(ValueError):
                    json.loads(await resp.read())
        srv.script = [{**CALL, "fault": "truncated_sse"}]  # a non-streamed body: half of it, then the close
        with pytest.raises(aiohttp.ClientPayloadError):
            await _post(srv.url, _body(flavour, char_tokenizer))
        assert [c.fault for c in srv.calls_to("/generate")] == ["malformed_json", "truncated_sse"]
