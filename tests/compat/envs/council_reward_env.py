"""A research env whose reward is a council of LLM judges, written the way upstream's council env is.

Uses ``environments.council_evaluator.CouncilEvaluator(model=...)`` built in ``setup`` (no server handle: the
judges go through the env's own server), ``evaluate(content=, question=, criteria=)``, ``extract_dpo_pairs``,
``verdict.confidence_score`` / ``verdict.sources``, and an eval that calls ``self.server.chat_completion``.
"""

from __future__ import annotations

import time
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig
from pydantic import Field

from environments.agent_loop import AgentResult
from environments.council_evaluator import CouncilEvaluator
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

QUESTIONS = [
    {"question": "Why do bridges have expansion joints?", "category": "engineering"},
    {"question": "Why is the sky blue?", "category": "physics"},
]


class CouncilEnvConfig(HermesAgentEnvConfig):
    council_model: str = Field(default="judge-model", description="Model name for the council.")


class CouncilRewardEnv(HermesAgentBaseEnv):
    name = "compat-council"
    env_config_cls = CouncilEnvConfig

    @classmethod
    def config_init(cls) -> tuple[CouncilEnvConfig, list[APIServerConfig]]:
        config = CouncilEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            system_prompt="You are a research agent. Answer with evidence and cite sources.",
            group_size=2,
            use_wandb=False,
            ensure_scores_are_not_same=False,
        )
        return config, [APIServerConfig(model_name="fake", base_url="http://127.0.0.1:9/v1", api_key="x")]

    async def setup(self) -> None:
        self.iter = 0
        self.evaluator = CouncilEvaluator(model=self.config.council_model)
        self.dpo_buffer: list[dict[str, Any]] = []

    async def get_next_item(self) -> dict[str, str]:
        item = QUESTIONS[self.iter % len(QUESTIONS)]
        self.iter += 1
        return item

    def format_prompt(self, item: dict[str, str]) -> str:
        return f"Research this question: {item['question']}"

    async def compute_reward(self, item: dict[str, str], result: AgentResult, ctx: ToolContext) -> float:
        answer = next(
            (
                m["content"]
                for m in reversed(result.messages)
                if m.get("role") == "assistant" and m.get("content")
            ),
            "",
        )
        if not answer:
            return 0.0
        verdict = await self.evaluator.evaluate(
            content=answer, question=item["question"], criteria=["accuracy", "evidence"]
        )
        self.dpo_buffer.extend(self.evaluator.extract_dpo_pairs(verdict))
        has_sources = 1.0 if verdict.sources else 0.0
        return max(0.0, min(1.0, 0.8 * verdict.confidence_score / 100.0 + 0.2 * has_sources))

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        start = time.time()
        samples = []
        for item in QUESTIONS:
            completion = await self.server.chat_completion(
                messages=[{"role": "user", "content": self.format_prompt(item)}], n=1, temperature=0.0,
                split="eval",
            )  # fmt: skip
            samples.append({"prompt": item["question"], "response": completion.choices[0].message.content})
        await self.evaluate_log(
            metrics={"eval/num_samples": len(samples)},
            samples=samples,
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    CouncilRewardEnv.cli()
