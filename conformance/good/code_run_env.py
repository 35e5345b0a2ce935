"""Code writing judged by running it; no gold can be derived and none is shipped: HC407 is not applicable."""

from __future__ import annotations

import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs import final_response

DATA = [
    {
        "task": "Write a Python function add(a, b) returning the sum.",
        "func": "add",
        "tests": "assert add(2, 3) == 5\nassert add(-1, 1) == 0",
    },
    {
        "task": "Write a Python function rev(s) returning s reversed.",
        "func": "rev",
        "tests": "assert rev('abc') == 'cba'",
    },
    {
        "task": "Write a Python function sq(n) returning n squared.",
        "func": "sq",
        "tests": "assert sq(4) == 16",
    },
    {
        "task": "Write a Python function evens(xs) returning the even numbers of xs.",
        "func": "evens",
        "tests": "assert evens([1,2,3,4]) == [2,4]",
    },
    {
        "task": "Write a Python function fact(n) returning n factorial.",
        "func": "fact",
        "tests": "assert fact(5) == 120",
    },
    {
        "task": "Write a Python function mx(xs) returning the largest element.",
        "func": "mx",
        "tests": "assert mx([3,9,2]) == 9",
    },
]


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


class CodeRunEnv(HermesAgentBaseEnv):
    name = "s-coderun"
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
        return item["task"] + " Reply with a ```python block."

    async def compute_reward(self, item, result, ctx):
        text = final_response(result) or ""
        m = re.search(r"```(?:python)?\n(.*?)```", text, re.S)
        if not m:
            return 0.0
        await ctx.awrite_file("solution.py", m.group(1) + "\n" + item["tests"] + "\n")
        run = await ctx.aterminal("python3 solution.py", timeout=20)
        return 1.0 if run.get("exit_code") == 0 else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/score")


if __name__ == "__main__":
    CodeRunEnv.cli()
