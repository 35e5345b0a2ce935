"""A prompt-bank benchmark env written the way upstream's fine-tune bench loads its cases: our own code.

``setup`` reads the cases from ``prompt_bank_path`` (a YAML file next to the env by default); a missing bank is a
logged warning and an empty bank, and ``get_next_item`` returns None once the cases run out.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml
from atroposlib.envs.server_handling.server_manager import APIServerConfig
from pydantic import Field

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

logger = logging.getLogger(__name__)


class PromptBankConfig(HermesAgentEnvConfig):
    prompt_bank_path: str = Field(
        default="prompt_bank_missing.yaml", description="The cases, relative to here."
    )


class PromptBankEnv(HermesAgentBaseEnv):
    name = "compat-prompt-bank"
    env_config_cls = PromptBankConfig

    @classmethod
    def config_init(cls) -> tuple[PromptBankConfig, list[APIServerConfig]]:
        config = PromptBankConfig(enabled_toolsets=["terminal"], group_size=1, use_wandb=False, total_steps=1)
        return config, [APIServerConfig(model_name="fake", base_url="http://127.0.0.1:9/v1", api_key="x")]

    async def setup(self) -> None:
        bank = Path(__file__).parent / self.config.prompt_bank_path
        if bank.exists():
            self.cases = yaml.safe_load(bank.read_text()).get("cases", [])
        else:
            logger.warning("Prompt bank not found: %s", bank)
            self.cases = []
        self.iter = 0

    async def get_next_item(self) -> dict[str, Any] | None:
        if self.iter >= len(self.cases):
            return None
        self.iter += 1
        return self.cases[self.iter - 1]

    def format_prompt(self, item: dict[str, Any]) -> str:
        return item["prompt"]

    async def compute_reward(self, item: dict[str, Any], result: AgentResult, ctx: ToolContext) -> float:
        return 0.0

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        for item in self.cases:
            await self.server.chat_completion(messages=[{"role": "user", "content": item["prompt"]}], n=1)


if __name__ == "__main__":
    PromptBankEnv.cli()
