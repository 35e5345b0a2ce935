"""History questions answered with a year (an integer gold in a field named ``year``); the reward takes the last
four-digit year of the answer. No tools.

Regression guard for HC410: nobody writes a year with a thousands separator ("1,989"), so a reward that reads
"1989" only is right, and the kit must not require that rendering of a year.
"""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

EVENTS = [
    {"question": "In what year did the Berlin Wall fall?", "year": 1989},
    {"question": "In what year did Apollo 11 land on the Moon?", "year": 1969},
    {"question": "In what year did the Titanic sink?", "year": 1912},
    {"question": "In what year was the first iPhone released?", "year": 2007},
    {"question": "In what year did World War I begin?", "year": 1914},
    {"question": "In what year was Python 3.0 released?", "year": 2008},
]

YEAR = re.compile(r"(?<![\d,])(1\d{3}|20\d{2})(?![\d,])")


def final_text(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


class HistoryYearEnv(HermesAgentBaseEnv):
    name = "good-history-year"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=1,
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
        self.train, self.held_out = EVENTS[:4], EVENTS[4:]
        self.i = 0

    async def get_next_item(self):
        item = self.train[self.i % len(self.train)]
        self.i += 1
        return item

    def format_prompt(self, item):
        return item["question"] + " Answer with the year."

    async def compute_reward(self, item, result, ctx):
        years = YEAR.findall(final_text(result))
        return 1.0 if years and int(years[-1]) == item["year"] else 0.0

    async def evaluate(self, *args, **kwargs):
        t0 = time.time()
        tools, names = self._resolve_tools_for_group()
        hits = 0.0
        for item in self.held_out:
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
                hits += await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/accuracy": hits / len(self.held_out)}, start_time=t0, end_time=time.time()
        )


if __name__ == "__main__":
    HistoryYearEnv.cli()
