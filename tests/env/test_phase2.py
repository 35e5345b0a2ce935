"""Phase 2 (vLLM / SGLang token endpoints through ManagedServer) vs Phase 1 (OpenAI tool_calls): same script,
same transcript and rewards; Phase 2 tokens are exact and masks cover exactly what the model generated."""

from __future__ import annotations

from typing import Any

import pytest
from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs.agent import AgentResult, final_response
from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.offline import load_offline_tokenizer, offline_tokenizer_path
from hermes_envs.tools import ToolContext

SCRIPT = [
    {
        "content": "Let me compute.",
        "tool_calls": [{"name": "terminal", "arguments": {"command": "echo $((6*7))"}}],
    },
    {"content": "The terminal says 42.\nAnswer: 42"},
]


class SixTimesSeven(HermesAgentBaseEnv):
    name = "six-times-seven"

    async def setup(self) -> None:
        self.items = [{"q": "What is 6*7?", "answer": "42"}]

    async def get_next_item(self) -> dict:
        return self.items[0]

    def format_prompt(self, item: dict) -> str:
        return item["q"]

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        used = any(m.get("role") == "tool" and "42" in m["content"] for m in result.messages)
        return (0.5 if used else 0.0) + (0.5 if final_response(result).endswith(item["answer"]) else 0.0)

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        return None


def build(server: FakeOpenAIServer, server_type: str, parser: str) -> SixTimesSeven:
    config = HermesAgentEnvConfig(
        tokenizer_name=offline_tokenizer_path(),
        use_wandb=False,
        group_size=2,
        enabled_toolsets=["terminal"],
        tool_call_parser=parser,
    )
    servers = [
        APIServerConfig(
            base_url=server.base_url,
            api_key="x",
            model_name="fake",
            server_type=server_type,
            tokenizer_name=offline_tokenizer_path(),
            health_check=False,
        )
    ]
    return SixTimesSeven(config, servers, slurm=False, testing=False)


def normalized(messages: list[dict]) -> list[dict]:
    """Messages without the per-call ids (random in both phases)."""
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if k != "tool_call_id"}
        if m.get("tool_calls"):
            m["tool_calls"] = [{"type": tc["type"], "function": tc["function"]} for tc in m["tool_calls"]]
        out.append(m)
    return out


# llama JSON calls have no room for text beside them: the model says nothing before calling.
CALL_ONLY = [{"tool_calls": SCRIPT[0]["tool_calls"]}, SCRIPT[1]]


async def collect(server_type: str, parser: str) -> tuple[dict, FakeOpenAIServer]:
    tok = load_offline_tokenizer()
    script = CALL_ONLY if parser.startswith("llama") else SCRIPT
    with FakeOpenAIServer(script=script, tokenizer=tok, tool_parser=parser) as srv:
        env = build(srv, server_type, parser)
        await env.setup()
        group, _ = await env.collect_trajectories(await env.get_next_item())
        srv.assert_no_failures()
        return group, srv


@pytest.mark.parametrize(
    ("server_type", "parser"),
    [
        ("vllm", p)
        for p in ("hermes", "mistral", "llama3_json", "qwen3_coder", "deepseek_v3", "kimi_k2", "glm45")
    ]
    + [("sglang", "hermes"), ("sglang", "qwen3_coder")],
)
async def test_phase2_matches_phase1(server_type: str, parser: str) -> None:
    phase1, _ = await collect("openai", parser)
    phase2, srv = await collect(server_type, parser)
    assert all(c.route == "/generate" for c in srv.calls)  # really went through the token endpoint
    assert phase2["scores"] == phase1["scores"] == [1.0, 1.0]
    for m1, m2 in zip(phase1["messages"], phase2["messages"]):
        assert normalized(m2) == normalized(m1)


async def test_phase2_tokens_are_exact_and_masks_cover_the_model_output() -> None:
    tok = load_offline_tokenizer()
    group, srv = await collect("vllm", "hermes")
    generated = [c.response["token_ids"][0] for c in srv.calls]  # what the fake model emitted, per turn
    for tokens, masks in zip(group["tokens"], group["masks"]):
        assert len(tokens) == len(masks)
        trained = [t for t in masks if t != -100]
        # every trained token is a model token, and every model token of this rollout is trained
        assert (
            trained == generated[0] + generated[1]
            or trained == generated[2] + generated[3]
            or any(trained == generated[i] + generated[j] for i in range(4) for j in range(4) if i != j)
        )
        text = tok.decode(tokens)
        assert text.startswith("<|im_start|>system") or text.startswith("<|im_start|>user")
        assert '"name": "terminal"' in text and text.endswith("Answer: 42<|im_end|>")
        assert masks[0] == -100


@pytest.mark.slow
def test_phase2_process_run_writes_exact_tokens(tmp_path: Any) -> None:
    """`python arithmetic_env.py process --openai.server_type vllm` against the fake /generate endpoint."""
    import json
    from pathlib import Path

    from hermes_envs.demo import run_process

    tok = load_offline_tokenizer()
    env_file = Path(__file__).parents[2] / "environments" / "arithmetic_env.py"
    script = [
        {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 42"}}]},
        {"content": "Answer: 42"},
    ]
    with FakeOpenAIServer(script=script, tokenizer=tok, tool_parser="hermes") as srv:
        done = run_process(env_file, tmp_path, srv.base_url, server_type="vllm")
        assert done.returncode == 0, done.stderr[-3000:]
        srv.assert_no_failures()
        generated = [c.response["token_ids"][0] for c in srv.calls if c.route == "/generate"]
    (line,) = (tmp_path / "arithmetic_env.jsonl").read_text().splitlines()
    group = json.loads(line)
    assert len(group["tokens"]) == 2 and (tmp_path / "arithmetic_env.html").exists()
    for tokens, masks, messages in zip(group["tokens"], group["masks"], group["messages"]):
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
        text = tok.decode(tokens)
        assert (
            text.startswith("<|im_start|>system")
            and "<tools>" in text
            and text.endswith("Answer: 42<|im_end|>")
        )
        trained = [t for t in masks if t != -100]
        pairs = [
            generated[i] + generated[j]
            for i in range(len(generated))
            for j in range(len(generated))
            if i != j
        ]
        assert trained in pairs  # exactly the model's two turns, nothing else
