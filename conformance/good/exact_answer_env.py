"""Tools + exact answer: count a letter in a word (the terminal may help), answer 'Answer: <n>'.

Guide style: built on HermesAgentBaseEnv, evaluate() runs HermesAgentLoop with the tools at temperature 0.
"""

from __future__ import annotations

import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

WORDS = [
    "strawberry",
    "banana",
    "bookkeeper",
    "mississippi",
    "committee",
    "parallel",
    "balloon",
    "coffee",
    "assessment",
    "possession",
    "address",
    "success",
    "letter",
    "attention",
    "barrel",
    "google",
]


def make_items() -> list[dict]:
    """Built-in data: the most frequent letter of each word and how often it occurs (no download)."""
    items = []
    for word in WORDS:
        letter = max(sorted(set(word)), key=word.count)
        items.append({"word": word, "letter": letter, "answer": str(word.count(letter))})
    return items


def final_answer(result: AgentResult) -> str:
    for message in reversed(result.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return message["content"]
    return ""


class LetterCountEnv(HermesAgentBaseEnv):
    """Full credit for the exact count; nothing otherwise."""

    name = "letter-count"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            system_prompt="You can use a terminal. End with 'Answer: <number>'.",
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="hermes",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self) -> None:
        items = make_items()
        random.Random(3).shuffle(items)
        self.eval_items, self.train_items = items[:4], items[4:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"How many times does the letter '{item['letter']}' occur in the word '{item['word']}'?"

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        numbers = re.findall(r"-?\d+", final_answer(result))
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            messages = self.initial_messages(item)
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run(messages)
            ctx = ToolContext(loop.task_id)
            try:
                correct += await self.compute_reward(item, result, ctx) == 1.0
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    LetterCountEnv.cli()
