"""atroposlib's server classes through ServerManager against the fake server (atroposlib imported lazily)."""

from __future__ import annotations

import pytest

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
SCRIPT = {
    "turns": [
        {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}]},
        {"content": "The answer is 42."},
    ]
}


async def test_openai_server_through_server_manager():
    from atroposlib.envs.server_handling.server_baseline import APIServerConfig
    from atroposlib.envs.server_handling.server_manager import ServerManager

    from hermes_envs.testing.fake_server import FakeOpenAIServer

    async with FakeOpenAIServer(SCRIPT) as srv:
        manager = ServerManager(
            [
                APIServerConfig(
                    base_url=srv.base_url,
                    api_key="x",
                    model_name="fake",
                    health_check=False,
                    server_type="openai",
                )
            ]
        )
        r = await manager.chat_completion(messages=[{"role": "user", "content": "q"}], tools=TOOLS, n=1)
        assert r.choices[0].message.tool_calls[0].function.name == "terminal"
        assert srv.chat_calls[0].body["model"] == "fake"
        srv.assert_no_failures()


async def test_openai_server_n_greater_than_one():
    from atroposlib.envs.server_handling.server_baseline import APIServerConfig
    from atroposlib.envs.server_handling.server_manager import ServerManager

    from hermes_envs.testing.fake_server import FakeOpenAIServer

    async with FakeOpenAIServer([{"content": "a", "choices": ["a", "b", "c"]}]) as srv:
        manager = ServerManager(
            [
                APIServerConfig(
                    base_url=srv.base_url,
                    api_key="x",
                    model_name="fake",
                    health_check=False,
                    server_type="openai",
                )
            ]
        )
        r = await manager.chat_completion(messages=[{"role": "user", "content": "q"}], n=3)
        assert [c.message.content for c in r.choices] == ["a", "b", "c"]
        assert srv.call_count == 1


def _offline_tokenizer_path():
    try:
        from hermes_envs.testing.offline import offline_tokenizer_path
    except ImportError:
        return None
    try:
        return str(offline_tokenizer_path())
    except Exception:
        return None


@pytest.mark.parametrize("server_type", ["vllm", "sglang"])
async def test_token_servers_through_server_manager(server_type):
    path = _offline_tokenizer_path()
    if path is None:
        pytest.skip("the offline tokenizer (hermes_envs.testing.offline) is not available yet")
    from atroposlib.envs.server_handling.server_baseline import APIServerConfig
    from atroposlib.envs.server_handling.server_manager import ServerManager
    from transformers import AutoTokenizer

    from hermes_envs.testing.fake_server import FakeOpenAIServer

    tok = AutoTokenizer.from_pretrained(path)
    async with FakeOpenAIServer([{"content": "The answer is 42."}], tokenizer=tok) as srv:
        manager = ServerManager(
            [
                APIServerConfig(
                    base_url=srv.base_url,
                    api_key="x",
                    model_name="fake",
                    tokenizer_name=path,
                    health_check=False,
                    server_type=server_type,
                )
            ]
        )
        prompt_ids = tok.encode("hello")
        server = manager.servers[0]
        prompt, outs, lps, finishes = await server._tokens_and_logprobs_completion_wrapper(
            model="fake", input_ids=prompt_ids, n=1, max_tokens=64
        )
        assert prompt == prompt_ids
        # the model's own end-of-turn token ends the output, as with a real vLLM/SGLang server
        assert outs[0][-1] == tok.eos_token_id and tok.decode(outs[0][:-1]) == "The answer is 42."
        assert len(lps[0]) == len(outs[0])
        srv.assert_no_failures()


async def test_fault_through_server_manager_is_fast_with_tuned_retries():
    import time

    from atroposlib.envs.server_handling.server_baseline import APIServerConfig
    from atroposlib.envs.server_handling.server_manager import ServerManager

    from hermes_envs.testing.fake_server import FakeOpenAIServer
    from hermes_envs.testing.retries import disable_client_retries, fast_retries

    async with FakeOpenAIServer([{"content": "ok", "fault": 500}]) as srv:
        manager = ServerManager(
            [
                APIServerConfig(
                    base_url=srv.base_url,
                    api_key="x",
                    model_name="fake",
                    health_check=False,
                    server_type="openai",
                )
            ]
        )
        disable_client_retries(manager)
        t0 = time.monotonic()
        with fast_retries(attempts=2):
            r = await manager.chat_completion(messages=[{"role": "user", "content": "q"}], n=1)
        assert r.choices[0].message.content == "ok"
        assert [c.status for c in srv.chat_calls] == [500, 200] and time.monotonic() - t0 < 2
