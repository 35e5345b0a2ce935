"""/v1/completions, vLLM and SGLang /generate, /tokenize, /detokenize (token ids from an injected tokenizer)."""

from __future__ import annotations

import json

import aiohttp
import httpx
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer

CALL = {"tool_calls": [{"name": "terminal", "arguments": {"command": "ls"}}]}
MARK = "<|im_start|>assistant"


def test_completions_route_with_openai_client():
    with FakeOpenAIServer([CALL, {"content": "done"}]) as srv:
        c = srv.client()
        r = c.completions.create(model="f", prompt=f"<|im_start|>user\nq<|im_end|>\n{MARK}\n")
        assert (
            r.choices[0].text
            == '<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"}}\n</tool_call>'
        )
        r = c.completions.create(model="f", prompt=f"user q\n{MARK}\nx\n<|im_start|>tool\nout\n{MARK}\n", n=2)
        assert [ch.text for ch in r.choices] == ["done", "done"] and r.object == "text_completion"
        chunks = list(
            c.completions.create(
                model="f", prompt=f"{MARK}\nx\n{MARK}\n", stream=True, stream_options={"include_usage": True}
            )
        )
        assert "".join(ch.choices[0].text for ch in chunks if ch.choices) == "done"
        assert chunks[-1].usage is not None
        srv.assert_no_failures()


def test_token_routes_without_tokenizer_are_501():
    with FakeOpenAIServer([{"content": "x"}]) as srv:
        r = httpx.post(srv.url + "/generate", json={"prompt": {"prompt_token_ids": [1, 2]}})
        assert r.status_code == 501 and "tokenizer" in r.json()["error"]["message"]


def test_vllm_generate_shape(char_tokenizer):
    with FakeOpenAIServer([{"content": "hi there"}], tokenizer=char_tokenizer) as srv:
        ids = char_tokenizer.encode(f"<|im_start|>user\nq<|im_end|>\n{MARK}\n")
        r = httpx.post(
            srv.url + "/generate",
            json={
                "prompt": {"prompt_token_ids": ids},
                "logprobs": 0,
                "n": 2,
                "max_tokens": 5,
                "temperature": 1.0,
            },
        ).json()
    assert r["finish_reasons"] == ["length", "length"]
    assert r["text"] == ["hi th", "hi th"] and r["prompt_token_ids"] == ids
    first = r["logprobs"][0]
    assert [int(next(iter(p[0]))) for p in first] == char_tokenizer.encode("hi th")
    assert all(next(iter(p[0].values())) < 0 for p in first)


async def test_sglang_generate_shape_with_aiohttp(char_tokenizer):
    async with FakeOpenAIServer([{"content": "ok"}], tokenizer=char_tokenizer) as srv:
        async with aiohttp.ClientSession() as s:
            async with s.post(
                srv.url + "/generate",
                json={
                    "input_ids": char_tokenizer.encode("p"),
                    "sampling_params": {"max_new_tokens": 10},
                    "return_logprob": True,
                },
            ) as resp:
                one = await resp.json()
            async with s.post(srv.url + "/generate", json={"text": "p", "sampling_params": {"n": 2}}) as resp:
                many = await resp.json()
    assert one["meta_info"]["finish_reason"] == {"type": "stop", "matched": None}
    assert [t[1] for t in one["meta_info"]["output_token_logprobs"]] == char_tokenizer.encode("ok")
    assert isinstance(many, list) and len(many) == 2


def test_tokenize_and_detokenize(char_tokenizer):
    with FakeOpenAIServer(tokenizer=char_tokenizer) as srv:
        t = httpx.post(srv.url + "/tokenize", json={"prompt": "abc"}).json()
        assert t["tokens"] == [97, 98, 99] and t["count"] == 3
        assert httpx.post(srv.url + "/detokenize", json={"tokens": t["tokens"]}).json() == {"prompt": "abc"}
        assert httpx.post(srv.url + "/detokenize", json={"tokens": "x"}).status_code == 400


def test_usage_counts_with_a_tokenizer(char_tokenizer):
    with FakeOpenAIServer([{"content": "abcd"}], tokenizer=char_tokenizer) as srv:
        r = srv.client().chat.completions.create(model="f", messages=[{"role": "user", "content": "hello"}])
        assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (5, 4)


def test_with_the_offline_tokenizer_when_available():
    try:
        from transformers import AutoTokenizer

        from hermes_envs.testing.offline import offline_tokenizer_path

        tok = AutoTokenizer.from_pretrained(str(offline_tokenizer_path()))
    except Exception as e:  # not shipped yet
        pytest.skip(f"offline tokenizer unavailable: {e}")
    with FakeOpenAIServer([{"content": "The answer is 42."}], tokenizer=tok) as srv:
        ids = tok.apply_chat_template(
            [{"role": "user", "content": "q"}], tokenize=True, add_generation_prompt=True
        )
        ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
        r = httpx.post(
            srv.url + "/generate", json={"prompt": {"prompt_token_ids": ids}, "logprobs": 0}
        ).json()
        assert r["token_ids"][0][-1] == tok.eos_token_id and r["text"] == ["The answer is 42."]
        assert tok.decode(r["token_ids"][0][:-1]) == "The answer is 42."
        tk = httpx.post(srv.url + "/tokenize", json={"messages": [{"role": "user", "content": "q"}]}).json()
        assert tk["count"] == len(tk["tokens"]) > 0
        json.dumps(r)


def test_usage_counts_tokenize_each_message_once_across_a_growing_conversation():
    class Counting:
        def __init__(self):
            self.seen: list[str] = []

        def encode(self, text, add_special_tokens=True):
            self.seen.append(text)
            return [ord(c) for c in text]

        def decode(self, ids, **kw):
            return "".join(chr(i) for i in ids)

    tok = Counting()
    history = [{"role": "user", "content": "a long task description " * 20}]
    with FakeOpenAIServer(policy="answer:text=done", tokenizer=tok) as srv:
        client = srv.client()
        for turn in range(3):
            r = client.chat.completions.create(model="f", messages=history)
            history += [
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": f"again {turn}"},
            ]
        assert r.usage.prompt_tokens == sum(len(m["content"]) for m in history[:-2])
        srv.assert_no_failures()
    assert tok.seen.count(history[0]["content"]) == 1 and tok.seen.count("done") == 1
