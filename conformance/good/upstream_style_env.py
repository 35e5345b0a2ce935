"""A guide-style env on an upstream-style base class (``_upstream_base.py``), not on hermes-envs' own base:
multiply two numbers, the terminal may help; evaluate runs the agent loop with tools at temperature 0.
"""

from __future__ import annotations

import re
import time

from _upstream_base import UpstreamAgentBaseEnv
from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentEnvConfig
from environments.tool_context import ToolContext

#: Upstream's base scores a rollout whose model call failed 0.0 (logging a warning) instead of dropping the group:
#: HC505 says so, as a warning (the outage is in the log, not in the metrics).
EXPECTED_WARNINGS = ["HC505"]


class UpstreamProductEnv(UpstreamAgentBaseEnv):
    name = "upstream-product"

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="hermes",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self) -> None:
        items = [{"x": x, "y": y, "product": str(x * y)} for x in (13, 27, 41, 56) for y in (17, 29, 38)]
        self.eval_items, self.train_items = items[:3], items[3:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Multiply {item['x']} by {item['y']}. Give only the number."

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        text = next(
            (
                m["content"]
                for m in reversed(result.messages)
                if m.get("role") == "assistant" and m.get("content")
            ),
            "",
        )
        numbers = re.findall(r"\d+", text.replace(",", ""))
        return 1.0 if numbers and numbers[-1] == item["product"] else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run([{"role": "user", "content": self.format_prompt(item)}])
            ctx = ToolContext(loop.task_id)
            try:
                correct += await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    UpstreamProductEnv.cli()
