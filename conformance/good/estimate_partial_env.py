"""Partial credit on a numeric estimate: the score falls linearly with the relative error (1.0 exact, 0 at 50 %
off). The gold is an integer in ``answer``; the reward takes the last number of the final reply. No tools.
"""

from __future__ import annotations

import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs import final_response

ROWS = [
    ("How many days are there in a leap year?", 366),
    ("How many keys does a standard piano have?", 88),
    ("How many minutes are in a day?", 1440),
    ("How many bones are in the adult human body?", 206),
    ("How many squares are on a chessboard grid of eight by eight?", 64),
    ("How many seconds are in an hour?", 3600),
    ("How many cards are in a standard deck without jokers?", 52),
]


class EstimatePartialEnv(HermesAgentBaseEnv):
    name = "estimate-partial"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=2,
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
        rows = [{"question": q, "answer": a} for q, a in ROWS]
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return f"{item['question']} Estimate if unsure; end with 'Answer: <number>'."

    async def compute_reward(self, item, result, ctx):
        numbers = re.findall(r"-?\d+(?:\.\d+)?", (final_response(result) or "").replace(",", ""))
        if not numbers:
            return 0.0
        error = abs(float(numbers[-1]) - item["answer"]) / item["answer"]
        return max(0.0, 1.0 - 2.0 * error)

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/closeness")


if __name__ == "__main__":
    EstimatePartialEnv.cli()
