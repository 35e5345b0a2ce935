"""Anagrams answered with the word alone (exact match after trimming punctuation), collected one rollout per
item (group_size 1, ensure_scores_are_not_same off, as for data generation). No tools.

Regression guard for HC412: the task asks for the word only, so "let silent" is another answer, not the correct
one in other words; the fuzz search must not add words before a gold the reward only accepts on its own.
"""

from __future__ import annotations

import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

PAIRS = [
    ("tinsel", "silent"),
    ("elbow", "below"),
    ("night", "thing"),
    ("state", "taste"),
    ("cider", "cried"),
    ("lemon", "melon"),
]


def final_text(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


class AnagramEnv(HermesAgentBaseEnv):
    name = "good-anagram"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=1,
            group_size=1,
            ensure_scores_are_not_same=False,
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
        rows = [{"letters": letters, "word": word} for letters, word in PAIRS]
        self.rows, self.held_out = rows[:4], rows[4:]
        self.at = 0

    async def get_next_item(self):
        row = self.rows[self.at % len(self.rows)]
        self.at += 1
        return row

    def format_prompt(self, item):
        return f"Rearrange the letters of '{item['letters']}' into another English word. Reply with the word only."

    async def compute_reward(self, item, result, ctx):
        return 1.0 if final_text(result).strip().strip(".!'\"*").lower() == item["word"] else 0.0

    async def evaluate(self, *args, **kwargs):
        t0 = time.time()
        tools, names = self._resolve_tools_for_group()
        hits = 0.0
        for item in self.held_out:
            loop = HermesAgentLoop(
                server=self.server, tool_schemas=tools, valid_tool_names=names, max_turns=1, temperature=0.0
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
    AnagramEnv.cli()
