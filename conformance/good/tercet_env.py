"""No gold at all: write a three-line poem about a topic; the reward checks the form (exactly three non-empty
lines, the topic named, no line over twelve words). Nothing in the item is an answer. No tools.
"""

from __future__ import annotations

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs import final_response

TOPICS = ["autumn", "harbour", "lantern", "glacier", "orchard", "thunder", "meadow", "compass"]


class TercetEnv(HermesAgentBaseEnv):
    name = "tercet"
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
        rows = [{"topic": t} for t in TOPICS]
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return (
            f"Write a poem of exactly three lines that names the {item['topic']}. Reply with the poem only."
        )

    async def compute_reward(self, item, result, ctx):
        lines = [line.strip() for line in (final_response(result) or "").strip().splitlines() if line.strip()]
        if len(lines) != 3 or any(len(line.split()) > 12 for line in lines):
            return 0.0
        return 1.0 if any(item["topic"] in line.lower() for line in lines) else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/form_ok")


if __name__ == "__main__":
    TercetEnv.cli()
