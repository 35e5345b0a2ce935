"""A case-bank eval env written the way upstream's fine-tune benchmark is: our own code, its usage.

Each case gets a host working folder (seeded with files) that ``register_task_env_overrides(task_id, {"cwd": ...})``
pins the task's terminal to (imported inside the function, as upstream does); the reward checks files with
``ctx.terminal``; ``_run_tool_in_thread`` reads a file through the registry; ``apply_patches()`` and
``_extract_reasoning_from_message`` are used as upstream env code uses them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig
from pydantic import Field

from environments.agent_loop import AgentResult, HermesAgentLoop, _extract_reasoning_from_message
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.patches import apply_patches
from environments.tool_context import ToolContext, _run_tool_in_thread

apply_patches()

CASES = [
    {
        "id": "append-line",
        "prompt": "Append the line 'two' to notes.txt in your working directory.",
        "files": {"notes.txt": "one\n"},
        "expect": "one\ntwo",
    }
]


class CasesConfig(HermesAgentEnvConfig):
    scratch_dir: str = Field(
        default="", description="Host folder for per-case working folders (temp if empty)."
    )


class WorkdirCasesEnv(HermesAgentBaseEnv):
    name = "compat-workdir-cases"
    env_config_cls = CasesConfig

    @classmethod
    def config_init(cls) -> tuple[CasesConfig, list[APIServerConfig]]:
        config = CasesConfig(
            enabled_toolsets=["terminal", "file"], max_agent_turns=5, group_size=1, use_wandb=False,
            ensure_scores_are_not_same=False, steps_per_eval=1, total_steps=1,
        )  # fmt: skip
        return config, [APIServerConfig(model_name="fake", base_url="http://127.0.0.1:9/v1", api_key="x")]

    async def setup(self) -> None:
        self.cases = list(CASES)
        self.iter = 0
        self.records: list[dict[str, Any]] = []
        self.scratch = Path(self.config.scratch_dir or tempfile.mkdtemp(prefix="compat-cases-"))

    async def get_next_item(self) -> dict[str, Any] | None:
        if self.iter >= len(self.cases):
            return None
        self.iter += 1
        return self.cases[self.iter - 1]

    def format_prompt(self, item: dict[str, Any]) -> str:
        return item["prompt"]

    async def compute_reward(self, item: dict[str, Any], result: AgentResult, ctx: ToolContext) -> float:
        check = ctx.terminal("cat notes.txt", timeout=30)
        return (
            1.0 if check.get("exit_code") == 0 and check.get("output", "").strip() == item["expect"] else 0.0
        )

    async def _rollout_case(self, item: dict[str, Any]) -> dict[str, Any]:
        from tools.terminal_tool import clear_task_env_overrides, register_task_env_overrides

        task_id = str(uuid.uuid4())
        workdir = self.scratch / item["id"]
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        for name, text in item["files"].items():
            (workdir / name).write_text(text)
        register_task_env_overrides(task_id, {"cwd": str(workdir)})
        tools, valid_names = self._resolve_tools_for_group()
        messages = [
            {"role": "user", "content": f"[Working directory: {workdir}]\n\n{self.format_prompt(item)}"}
        ]
        agent = HermesAgentLoop(
            server=self.server, tool_schemas=tools, valid_tool_names=valid_names,
            max_turns=self.config.max_agent_turns, task_id=task_id, temperature=0.0,
            budget_config=self.config.build_budget_config(),
        )  # fmt: skip
        result = await agent.run(messages)
        ctx = ToolContext(task_id)
        try:
            reward = await self.compute_reward(item, result, ctx)
            listing = json.loads(_run_tool_in_thread("terminal", {"command": "ls"}, task_id))
        finally:
            ctx.cleanup()
            clear_task_env_overrides(task_id)
        reasoning = [
            _extract_reasoning_from_message(m) for m in result.messages if m.get("role") == "assistant"
        ]
        return {"id": item["id"], "reward": reward, "files": listing.get("output", "").split(),
                "reasoning": reasoning, "host_file": (workdir / "notes.txt").read_text()}  # fmt: skip

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        self.records = [await self._rollout_case(item) for item in self.cases]
        rate = sum(r["reward"] for r in self.records) / len(self.records)
        await self.evaluate_log(metrics={"eval/completion_rate": rate}, samples=self.records)


if __name__ == "__main__":
    WorkdirCasesEnv.cli()
