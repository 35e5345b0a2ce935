"""A case-bank eval env for a Docker-style sandbox, written the way upstream's fine-tune benchmark uses one.

``terminal_backend="docker"`` (the container-style sandbox stands in when no daemon answers); ``setup`` mounts a
host scratch folder into every task's container through ``TERMINAL_DOCKER_VOLUMES`` (a JSON list of
``"host:container"``, the same path on both sides); each case seeds files in its host folder and pins the task
there with ``register_task_env_overrides(task_id, {"cwd": ...})``; the model writes files by relative path and the
reward runs them with ``ctx.terminal``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig
from pydantic import Field

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

CASES = [
    {
        "id": "hello-script",
        "prompt": "Create hello.py that prints hello, next to the README.",
        "files": {"README.md": "scratch\n"},
    }
]


class MountedCasesConfig(HermesAgentEnvConfig):
    scratch_dir: str = Field(default="", description="Host folder mounted into every task (temp if empty).")


class MountedCasesEnv(HermesAgentBaseEnv):
    name = "compat-mounted-cases"
    env_config_cls = MountedCasesConfig

    @classmethod
    def config_init(cls) -> tuple[MountedCasesConfig, list[APIServerConfig]]:
        config = MountedCasesConfig(
            enabled_toolsets=["terminal", "file"], terminal_backend="docker", max_agent_turns=4, group_size=1,
            use_wandb=False, ensure_scores_are_not_same=False, steps_per_eval=1, total_steps=1,
        )  # fmt: skip
        return config, [APIServerConfig(model_name="fake", base_url="http://127.0.0.1:9/v1", api_key="x")]

    async def setup(self) -> None:
        self.cases = list(CASES)
        self.iter = 0
        self.records: list[dict[str, Any]] = []
        self.scratch = Path(self.config.scratch_dir or tempfile.mkdtemp(prefix="compat-mounted-"))
        self.scratch.mkdir(parents=True, exist_ok=True)
        os.environ["TERMINAL_DOCKER_VOLUMES"] = json.dumps([f"{self.scratch}:{self.scratch}"])

    async def get_next_item(self) -> dict[str, Any] | None:
        if self.iter >= len(self.cases):
            return None
        self.iter += 1
        return self.cases[self.iter - 1]

    def format_prompt(self, item: dict[str, Any]) -> str:
        return item["prompt"]

    async def compute_reward(self, item: dict[str, Any], result: AgentResult, ctx: ToolContext) -> float:
        ran = ctx.terminal("python3 hello.py", timeout=30)
        listing = ctx.terminal("ls", timeout=30).get("output", "").split()
        return float(ran.get("output", "").strip() == "hello" and {"README.md", "hello.py"} <= set(listing))

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
        agent = HermesAgentLoop(
            server=self.server, tool_schemas=tools, valid_tool_names=valid_names,
            max_turns=self.config.max_agent_turns, task_id=task_id, temperature=0.0,
        )  # fmt: skip
        result = await agent.run(
            [{"role": "user", "content": f"[Working directory: {workdir}]\n\n{item['prompt']}"}]
        )
        ctx = ToolContext(task_id)
        try:
            reward = await self.compute_reward(item, result, ctx)
            pwd = ctx.terminal("pwd").get("output", "").strip()
        finally:
            ctx.cleanup()
            clear_task_env_overrides(task_id)
        return {"id": item["id"], "reward": reward, "pwd": pwd}

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        self.records = [await self._rollout_case(item) for item in self.cases]
        await self.evaluate_log(
            metrics={"eval/completion_rate": self.records[0]["reward"]}, samples=self.records
        )


if __name__ == "__main__":
    MountedCasesEnv.cli()
