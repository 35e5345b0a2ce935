"""HC802: a custom tool lists 'target' in required but not in properties."""

from __future__ import annotations

import math
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC802"]

DATA = [
    {"value": 5, "unit_from": "km", "unit_to": "m", "expected": 5000.0},
    {"value": 3, "unit_from": "ft", "unit_to": "in", "expected": 36.0},
    {"value": 2.5, "unit_from": "kg", "unit_to": "g", "expected": 2500.0},
    {"value": 90, "unit_from": "min", "unit_to": "h", "expected": 1.5},
    {"value": 4, "unit_from": "gal", "unit_to": "qt", "expected": 16.0},
    {"value": 7, "unit_from": "m", "unit_to": "cm", "expected": 700.0},
]


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


def grade(item, text):
    cleaned = text.replace(",", "")
    nums = re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", cleaned)
    if not nums:
        return 0.0
    got = float(nums[-1])
    want = float(item["expected"])
    return 1.0 if math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-9) else 0.0


class UnitsEnv(HermesAgentBaseEnv):
    name = "s-units"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:9001/v1",
                model_name="m",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        rows = list(DATA)
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return f"Convert {item['value']} {item['unit_from']} to {item['unit_to']}. Give just the number."

    async def compute_reward(self, item, result, ctx):
        return grade(item, last_answer(result))

    async def evaluate(self, *args, **kwargs):
        t0 = time.time()
        tools, names = self._resolve_tools_for_group()
        total = 0.0
        for item in self.test:
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
                total += await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/score": total / len(self.test)}, start_time=t0, end_time=time.time()
        )

    def _resolve_tools_for_group(self):
        schemas, names = super()._resolve_tools_for_group()
        lookup = {
            "type": "function",
            "function": {
                "name": "lookup_unit",
                "description": "Conversion factor.",
                "parameters": {
                    "type": "object",
                    "properties": {"unit": {"type": "string"}},
                    "required": ["unit", "target"],
                },
            },
        }
        return schemas + [lookup], names | {"lookup_unit"}


if __name__ == "__main__":
    UnitsEnv.cli()
