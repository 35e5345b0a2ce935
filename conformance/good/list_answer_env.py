"""Answers that are lists (JSON or comma-separated), compared in order (upstream layout, no tools)."""

from __future__ import annotations

import json
import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig

DATA = [
    {"question": "List the primes below 10 in increasing order.", "items": [2, 3, 5, 7]},
    {
        "question": "Name the first three planets from the sun, in order.",
        "items": ["Mercury", "Venus", "Earth"],
    },
    {"question": "List the vowels in order.", "items": ["a", "e", "i", "o", "u"]},
    {"question": "Give the first four square numbers in order.", "items": [1, 4, 9, 16]},
    {"question": "List the RGB primary colours in order.", "items": ["red", "green", "blue"]},
    {"question": "First three months of the year, in order.", "items": ["January", "February", "March"]},
]


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


def parse_list(text):
    m = re.search(r"\[.*\]", text, re.S)
    if m:
        try:
            v = json.loads(m.group(0))
            if isinstance(v, list):
                return [str(x).strip().lower() for x in v]
        except json.JSONDecodeError:
            pass
    line = text.strip().splitlines()[-1] if text.strip() else ""
    line = re.sub(r"^[^:]*:", "", line) if ":" in line else line
    return [p.strip().strip(".").lower() for p in re.split(r",|;|\band\b", line) if p.strip().strip(".")]


def grade(item, text):
    want = [str(x).lower() for x in item["items"]]
    return 1.0 if parse_list(text) == want else 0.0


class ListEnv(HermesAgentBaseEnv):
    name = "s-lists"
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
        return item["question"] + " Answer as a JSON list."

    async def compute_reward(self, item, result, ctx):
        return grade(item, last_answer(result))

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/score")


if __name__ == "__main__":
    ListEnv.cli()
