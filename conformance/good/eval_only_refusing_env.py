"""An eval-only benchmark that says so: get_next_item raises NotImplementedError ("run it with evaluate") instead
of serving items, and evaluate() checks each task's sandbox with a shell test (the blind corpus's csv_bench shape).

Regression guard for HC202: a deliberate eval-only env is a legitimate shape, so its refusal is a warning naming the
shape, and evaluate() is still judged (HC701-HC707 run).
"""

from __future__ import annotations

import time
import uuid

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

EXPECTED_WARNINGS = ["HC202"]

TASKS = [
    {"id": "mkdir", "instruction": "Create a directory named build.", "check": "test -d build"},
    {"id": "greet", "instruction": "Create hello.txt holding the word hi.", "check": "grep -qx hi hello.txt"},
    {"id": "count", "instruction": "Write the number 3 into n.txt.", "check": "grep -qx 3 n.txt"},
]


class RefusingShellBench(HermesAgentBaseEnv):
    name = "good-refusing-shell-bench"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=6,
            agent_temperature=0.0,
            group_size=1,
            total_steps=1,
            steps_per_eval=1,
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
        self.tasks = list(TASKS)
        self.pos = 0

    async def get_next_item(self):
        raise NotImplementedError("refusing-shell-bench is an evaluation benchmark; run it with `evaluate`")

    def format_prompt(self, item):
        return item["instruction"]

    async def compute_reward(self, item, result, ctx):
        return 0.0

    async def run_task(self, item: dict) -> dict:
        task_id = f"{item['id']}-{uuid.uuid4().hex[:8]}"
        tools, names = self._resolve_tools_for_group()
        loop = HermesAgentLoop(
            server=self.server,
            tool_schemas=tools,
            valid_tool_names=names,
            max_turns=self.config.max_agent_turns,
            task_id=task_id,
            temperature=0.0,
        )
        result = await loop.run([{"role": "user", "content": self.format_prompt(item)}])
        ctx = ToolContext(task_id)
        try:
            run = await ctx.aterminal(item["check"], timeout=30)
        finally:
            ctx.cleanup()
        return {"id": item["id"], "passed": run.get("exit_code") == 0, "turns": result.turns_used}

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        rows = [await self.run_task(item) for item in self.tasks]
        await self.evaluate_log(
            metrics={"eval/pass_rate": sum(r["passed"] for r in rows) / len(rows)},
            samples=rows,
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    RefusingShellBench.cli()
