"""vLLM's ``/generate`` with ``prompt_logprobs``: the fake server answers in vLLM's shape, which atroposlib's
``VLLMServer.get_logprobs`` (on-policy distillation's teacher scores) reads into non-zero top-k arrays."""

from __future__ import annotations

import httpx
from atroposlib.envs.server_handling.vllm_server import VLLMServer

from hermes_envs.testing.fake_server import FakeOpenAIServer


def test_prompt_logprobs_in_vllms_shape(char_tokenizer) -> None:
    ids = char_tokenizer.encode("<|im_start|>user\nwhat is 2+2?<|im_end|>\n")
    with FakeOpenAIServer([{"content": "4"}], tokenizer=char_tokenizer) as srv:
        asked = httpx.post(
            srv.url + "/generate",
            json={
                "prompt": {"prompt_token_ids": ids},
                "prompt_logprobs": 3,
                "max_tokens": 1,
                "temperature": 0.0,
            },
        ).json()
        plain = httpx.post(
            srv.url + "/generate", json={"prompt": {"prompt_token_ids": ids}, "max_tokens": 1}
        ).json()
    assert "prompt_logprobs" not in plain  # only when asked, as vLLM
    entries = asked["prompt_logprobs"]
    assert len(entries) == len(ids) and entries[0] is None  # the first prompt token has no logprob
    for tid, entry in zip(ids[1:], entries[1:], strict=True):
        top_ids, top_lps = VLLMServer._normalize_topk_entry(entry)
        assert len(top_ids) == 3 and top_ids[0] == tid  # the prompt's own token, then the alternatives
        assert all(lp < 0 for lp in top_lps) and top_lps == sorted(top_lps, reverse=True)


def test_prompt_logprobs_zero_gives_the_prompt_token_alone(char_tokenizer) -> None:
    ids = char_tokenizer.encode("abc")
    with FakeOpenAIServer([{"content": "x"}], tokenizer=char_tokenizer) as srv:
        entries = httpx.post(
            srv.url + "/generate", json={"prompt": {"prompt_token_ids": ids}, "prompt_logprobs": 0}
        ).json()["prompt_logprobs"]
    assert entries[0] is None and [list(map(int, e)) for e in entries[1:]] == [[i] for i in ids[1:]]


def test_more_prompt_logprobs_than_vllms_default_cap_is_refused_with_the_cause(char_tokenizer) -> None:
    # upstream's agentic OPD env asks top_k = distill_topk = 50 by default; vLLM caps at --max-logprobs (20)
    with FakeOpenAIServer([{"content": "x"}], tokenizer=char_tokenizer, strict=False) as srv:
        reply = httpx.post(
            srv.url + "/generate", json={"prompt": {"prompt_token_ids": [1, 2, 3]}, "prompt_logprobs": 50}
        )
    assert reply.status_code == 400
    message = reply.json()["error"]["message"]
    assert (
        "`prompt_logprobs` should be an integer from 0 to 20 (vLLM's default `--max-logprobs`); got 50"
        in message
    )
    assert "distill_topk: 20" in message and "--max-logprobs" in message.split("Fix:", 1)[1]
