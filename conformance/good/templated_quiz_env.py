"""Templated questions that differ only in a number ("Which element has atomic number 3?" / "... number 12?"),
split by element, answered on a fixed `Answer: <name>` line that the reward reads exactly (case-insensitive, no
markup stripped: the prompt fixes the format). The blind corpus's element-quiz shape.

Regression guard for HC202 (two templated questions with different numbers are different problems, not the same
problem renumbered) and HC410 (whether "**Lithium**" must score like "Lithium" is the kit's guess when the prompt
fixes the answer format: a warning).
"""

from __future__ import annotations

import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

EXPECTED_WARNINGS = ["HC410"]

ELEMENTS = [
    (1, "Hydrogen"),
    (2, "Helium"),
    (3, "Lithium"),
    (6, "Carbon"),
    (7, "Nitrogen"),
    (8, "Oxygen"),
    (10, "Neon"),
    (11, "Sodium"),
    (12, "Magnesium"),
    (17, "Chlorine"),
    (18, "Argon"),
    (26, "Iron"),
]
ANSWER = re.compile(r"Answer:[ \t]*([A-Za-z]+)")


def _final(result: AgentResult) -> str:
    for message in reversed(result.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return message["content"]
    return ""


class TemplatedQuizEnv(HermesAgentBaseEnv):
    """Name the element with a given atomic number."""

    name = "good-templated-quiz"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=2,
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
        items = [{"number": n, "element": name} for n, name in ELEMENTS]
        random.Random(5).shuffle(items)
        self.eval_items, self.train_items = items[:4], items[4:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"Which element has atomic number {item['number']}? End with one line `Answer: <name>`, the plain "
            "English name and nothing else on that line."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        found = ANSWER.findall(_final(result))
        return 1.0 if found and found[-1].casefold() == item["element"].casefold() else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            scores.append(await self.score_rollout(item, result, task_id))
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / len(scores)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    TemplatedQuizEnv.cli()
