"""HC604: every task writes and the reward reads /tmp/answer.txt, one file for all concurrent rollouts."""

from __future__ import annotations

import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC604"]

DATA = [
    {"filename": "notes/todo.txt", "text": "buy milk"},
    {"filename": "notes/plan.txt", "text": "ship v2 friday"},
    {"filename": "notes/idea.txt", "text": "solar kettle"},
    {"filename": "notes/memo.txt", "text": "call the bank"},
    {"filename": "notes/list.txt", "text": "eggs, flour"},
    {"filename": "notes/goal.txt", "text": "run 5 km"},
]


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


class NotesEnv(HermesAgentBaseEnv):
    name = "s-notes"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["file"],
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
        return f"Create the file /tmp/answer.txt containing exactly: {item['text']}"

    async def compute_reward(self, item, result, ctx):
        try:
            content = await ctx.aread_file("/tmp/answer.txt")
        except Exception:
            return 0.0
        return 1.0 if content.strip() == item["text"] else 0.0

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


if __name__ == "__main__":
    NotesEnv.cli()
