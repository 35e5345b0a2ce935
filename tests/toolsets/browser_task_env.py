"""A browser env for the process-run test: open the ferry timetable, search sailings, report the first one."""

from __future__ import annotations

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import final_response
from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig

ITEMS = [
    {"destination": "Tern Island", "answer": "08:15"},
    {"destination": "Tern Island.", "answer": "08:15"},
]


class FerryBrowserEnv(HermesAgentBaseEnv):
    name = "ferry-browser"

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["browser"], max_agent_turns=5, group_size=2, tokenizer_name="offline"
        )
        return config, [APIServerConfig(base_url="http://localhost:8000/v1", model_name="x", api_key="x",
                                        server_type="openai", health_check=False)]  # fmt: skip

    async def setup(self) -> None:
        self.index = 0

    async def get_next_item(self) -> dict:
        self.index += 1
        return ITEMS[self.index % len(ITEMS)]

    def format_prompt(self, item: dict) -> str:
        return (
            f"On https://ferry.porthalden.invalid/timetable find the first sailing to {item['destination']}"
        )

    async def compute_reward(self, item: dict, result, ctx) -> float:
        page = await ctx.abrowser_snapshot()  # the page the rollout left open
        on_results = 'heading "Sailings"' in page.get("snapshot", "")
        return 1.0 if item["answer"] in final_response(result) and on_results else 0.0

    async def evaluate(self, *args, **kwargs) -> dict:
        return {}


if __name__ == "__main__":
    FerryBrowserEnv.cli()
