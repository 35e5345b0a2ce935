"""HC402: the env ignores HC401, but a reward that raises on every call (dict access) is still red."""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC402"]

DATA = [
    {"question": "2+2?", "options": ["3", "4", "5", "6"], "correct": "B"},
    {"question": "Largest planet?", "options": ["Mars", "Venus", "Jupiter", "Earth"], "correct": "C"},
    {"question": "H2O is?", "options": ["water", "salt", "air", "gold"], "correct": "A"},
    {"question": "Square root of 81?", "options": ["7", "8", "10", "9"], "correct": "D"},
    {"question": "Colour of the sky?", "options": ["red", "blue", "green", "black"], "correct": "B"},
    {"question": "Fastest land animal?", "options": ["cheetah", "snail", "cow", "dog"], "correct": "A"},
]


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


def grade(item, text):
    m = re.findall(r"\b([ABCD])\b", text.upper())
    return 1.0 if m and m[-1] == item["correct"] else 0.0


class QuizEnv(HermesAgentBaseEnv):
    name = "s-quiz"
    conformance_ignore = {"HC401": "we know"}
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
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
        return (
            item["question"]
            + " "
            + " ".join(f"{L}) {o}" for L, o in zip("ABCD", item["options"]))
            + " Reply with the letter."
        )

    async def compute_reward(self, item, result, ctx):
        return grade(item, result["messages"][-1]["content"])

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
    QuizEnv.cli()
