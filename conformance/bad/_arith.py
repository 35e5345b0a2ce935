"""The arithmetic env the HC402/HC411/HC412 mutants share (one correct env, each mutant overrides only its
reward): terminal toolset, exact numeric answers, an evaluate() through the agent loop with tools."""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

DATA = [
    {"q": "What is 37 * 12?", "answer": "444"},
    {"q": "What is 41 * 29?", "answer": "1189"},
    {"q": "What is 53 * 47?", "answer": "2491"},
    {"q": "What is 88 * 19?", "answer": "1672"},
    {"q": "What is 64 * 33?", "answer": "2112"},
    {"q": "What is 72 * 18?", "answer": "1296"},
]


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


def grade(item, text):
    nums = re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)
    if not nums:
        return 0.0
    try:
        return 1.0 if float(nums[-1].replace(",", "")) == float(item["answer"]) else 0.0
    except ValueError:
        return 0.0


class ArithBase(HermesAgentBaseEnv):
    name = "s-arith"
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
        return item["q"] + " End with the number."

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
