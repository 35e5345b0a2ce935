"""A terminal task judged by running a check command in the task's sandbox; the gold is a command."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import asdict

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import HermesAgentBaseEnv, HermesAgentEnvConfig, ToolContext

ROWS = [
    {
        "goal": "Create a directory build containing an empty file ok.",
        "check": "test -f build/ok",
        "solution": "mkdir -p build && touch build/ok",
    },
    {
        "goal": "Create data/x.csv containing the line a,b.",
        "check": "grep -qx 'a,b' data/x.csv",
        "solution": "mkdir -p data && echo 'a,b' > data/x.csv",
    },
    {
        "goal": "Make a file named hello.txt holding hi.",
        "check": "grep -qx hi hello.txt",
        "solution": "echo hi > hello.txt",
    },
    {
        "goal": "Create out/log with the word done.",
        "check": "grep -q done out/log",
        "solution": "mkdir -p out && echo done > out/log",
    },
    {"goal": "Create empty file flag.", "check": "test -f flag", "solution": "touch flag"},
    {"goal": "Create dir a/b/c.", "check": "test -d a/b/c", "solution": "mkdir -p a/b/c"},
]

GRADER = None


class ShellEnv(HermesAgentBaseEnv):
    name = "s-shell"

    @classmethod
    def config_init(cls):
        return HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=3,
            group_size=2,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            system_prompt="Solve the task. Put the final answer in your last message.",
        ), [
            APIServerConfig(
                base_url="http://localhost:9001/v1",
                model_name="m",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        rows = [dict(r) for r in ROWS]
        self._held_out = rows[-2:]
        self._cycle = itertools.cycle(rows[:-2])

    async def get_next_item(self):
        row = next(self._cycle)
        return asdict(row) if not isinstance(row, dict) else row

    def format_prompt(self, item):
        return item["goal"] + " Use the terminal."

    async def compute_reward(self, item, result, ctx):
        run = await ctx.aterminal(item["check"], timeout=10)
        return 1.0 if run.get("exit_code") == 0 else 0.0

    async def evaluate(self, *args, **kwargs):
        scores = []
        for item in self._held_out:
            task = f"eval-{uuid.uuid4().hex}"
            result = await self.run_agent(self.initial_messages(item), task_id=task, temperature=0.0)
            ctx = ToolContext(task)
            try:
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        return {"eval/mean_score": sum(scores) / max(len(scores), 1)}


if __name__ == "__main__":
    ShellEnv.cli()
