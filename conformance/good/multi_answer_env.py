"""Several correct answers per item: "name a prime between 10 and 20" accepts any of 11, 13, 17, 19. The item
lists them all; the reward takes the last integer of the final reply and checks it is one of them. No tools.
"""

from __future__ import annotations

import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs import final_response


def primes(lo: int, hi: int) -> list[int]:
    return [n for n in range(lo + 1, hi) if n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))]


RANGES = [(10, 20), (20, 30), (30, 40), (40, 50), (50, 60), (60, 70), (70, 80), (80, 90)]


class MultiAnswerEnv(HermesAgentBaseEnv):
    name = "multi-answer"
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
        words = ["ten", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
        rows = [
            {"low": words[i], "high": words[i + 1], "answers": primes(lo, hi)}
            for i, (lo, hi) in enumerate(RANGES)
        ]
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return f"Name any prime number between {item['low']} and {item['high']}. End with 'Answer: <number>'."

    async def compute_reward(self, item, result, ctx):
        numbers = re.findall(r"-?\d+", (final_response(result) or "").replace(",", ""))
        return 1.0 if numbers and int(numbers[-1]) in item["answers"] else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/accuracy")


if __name__ == "__main__":
    MultiAnswerEnv.cli()
