"""An eval-only benchmark env written the way upstream's terminal benchmark is: our own code, its usage.

Uses ``tools.terminal_tool`` (register/clear overrides, cleanup_vm, cleanup_all_environments at the end),
``_resolve_tools_for_group``, ``_use_managed_server``, ``HermesAgentLoop(..., budget_config=build_budget_config())``,
a verifier run in a worker thread through ``ToolContext`` (terminal, write_file, upload_dir, download_dir), a
per-task wall-clock timeout, ``evaluate_log`` and ``_tool_executor.shutdown(...)``.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from atroposlib.envs.base import EvalHandlingEnum
from atroposlib.envs.server_handling.server_manager import APIServerConfig
from pydantic import Field

from environments.agent_loop import HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

# isort: split
# upstream imports environments.* first: that import makes tools.terminal_tool importable
from tools.terminal_tool import cleanup_vm, clear_task_env_overrides, register_task_env_overrides

TASKS = [
    {
        "task_name": "make-greeting",
        "category": "files",
        "instruction": "Create greeting.txt containing the word hello.",
        "docker_image": "example/greeting:latest",
        "test_sh": "mkdir -p logs/verifier; grep -q hello greeting.txt && echo 1 > logs/verifier/reward.txt || "
        "echo 0 > logs/verifier/reward.txt",
        "tests": {"expected.txt": "hello\n"},
    },
    {
        "task_name": "count-lines",
        "category": "shell",
        "instruction": "Write the number 3 into count.txt.",
        "docker_image": "example/count:latest",
        "test_sh": 'mkdir -p logs/verifier; test "$(cat count.txt)" = 3 && echo 1 > logs/verifier/reward.txt',
        "tests": {},
    },
]


class BenchEvalConfig(HermesAgentEnvConfig):
    test_timeout: int = Field(default=60, description="Seconds the verifier may run.")
    task_timeout: int = Field(default=300, description="Wall-clock seconds per task.")
    max_concurrent_tasks: int = Field(default=2, description="Tasks evaluated at once.")


class BenchEvalEnv(HermesAgentBaseEnv):
    name = "compat-bench-eval"
    env_config_cls = BenchEvalConfig

    @classmethod
    def config_init(cls) -> tuple[BenchEvalConfig, list[APIServerConfig]]:
        config = BenchEvalConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=6,
            max_token_length=2048,
            agent_temperature=0.0,
            terminal_timeout=60,
            eval_handling=EvalHandlingEnum.STOP_TRAIN,
            group_size=1,
            steps_per_eval=1,
            total_steps=1,
            use_wandb=False,
            ensure_scores_are_not_same=False,
            default_result_size_chars=20_000,
        )
        return config, [APIServerConfig(model_name="fake", base_url="http://127.0.0.1:9/v1", api_key="x")]

    async def setup(self) -> None:
        self.all_eval_items = list(TASKS)
        self.iter = 0
        self.results: list[dict[str, Any]] = []

    async def get_next_item(self) -> dict[str, Any]:
        item = self.all_eval_items[self.iter % len(self.all_eval_items)]
        self.iter += 1
        return item

    def format_prompt(self, item: dict[str, Any]) -> str:
        return item["instruction"]

    async def compute_reward(self, item: Any, result: Any, ctx: ToolContext) -> float:
        return 0.0  # eval-only: the verifier below scores

    async def collect_trajectories(self, item: Any) -> tuple[None, list]:
        return None, []

    async def rollout_and_score_eval(self, item: dict[str, Any]) -> dict[str, Any]:
        task_id = str(uuid.uuid4())
        try:
            register_task_env_overrides(task_id, {"docker_image": item["docker_image"]})
            tools, valid_names = self._resolve_tools_for_group()
            messages = [{"role": "user", "content": self.format_prompt(item)}]
            assert not self._use_managed_server()  # an OpenAI-type server: the direct path
            agent = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=valid_names,
                max_turns=self.config.max_agent_turns,
                task_id=task_id,
                temperature=self.config.agent_temperature,
                max_tokens=self.config.max_token_length,
                extra_body=self.config.extra_body,
                budget_config=self.config.build_budget_config(),
            )
            result = await agent.run(messages)
            ctx = ToolContext(task_id)
            try:
                reward = await asyncio.get_event_loop().run_in_executor(None, self._run_tests, item, ctx)
            finally:
                ctx.cleanup()
            return {"task_name": item["task_name"], "passed": reward == 1.0, "reward": reward,
                    "turns_used": result.turns_used, "termination": result.termination}  # fmt: skip
        finally:
            clear_task_env_overrides(task_id)
            cleanup_vm(task_id)

    def _run_tests(self, item: dict[str, Any], ctx: ToolContext) -> float:
        staged = Path(tempfile.mkdtemp(prefix="compat-tests-"))
        verifier = Path(tempfile.mkdtemp(prefix="compat-verifier-"))
        try:
            for name, text in item["tests"].items():
                (staged / name).write_text(text)
            ctx.terminal("mkdir -p tests logs/verifier")
            ctx.upload_dir(str(staged), "tests")
            ctx.write_file("tests/test.sh", item["test_sh"])
            outcome = ctx.terminal("bash tests/test.sh", timeout=self.config.test_timeout)
            ctx.download_dir("logs/verifier", str(verifier))
            reward_file = verifier / "reward.txt"
            if reward_file.exists() and reward_file.read_text().strip():
                return float(reward_file.read_text().strip())
            return 1.0 if outcome.get("exit_code") == 0 else 0.0
        finally:
            shutil.rmtree(staged, ignore_errors=True)
            shutil.rmtree(verifier, ignore_errors=True)

    async def _eval_with_timeout(self, item: dict[str, Any]) -> dict[str, Any]:
        try:
            return await asyncio.wait_for(self.rollout_and_score_eval(item), timeout=self.config.task_timeout)
        except asyncio.TimeoutError:
            return {"task_name": item["task_name"], "passed": False, "reward": 0.0, "error": "timeout"}

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        start = time.time()
        semaphore = asyncio.Semaphore(self.config.max_concurrent_tasks)

        async def bounded(item: dict[str, Any]) -> dict[str, Any]:
            async with semaphore:
                return await self._eval_with_timeout(item)

        self.results = list(await asyncio.gather(*(bounded(i) for i in self.all_eval_items)))
        passed = sum(1 for r in self.results if r.get("passed"))
        metrics = {"eval/pass_rate": passed / len(self.results), "eval/total_tasks": len(self.results)}
        await self.evaluate_log(metrics=metrics, samples=self.results, start_time=start, end_time=time.time())

        from tools.terminal_tool import cleanup_all_environments

        cleanup_all_environments()
        from environments.agent_loop import _tool_executor

        _tool_executor.shutdown(wait=False, cancel_futures=True)


if __name__ == "__main__":
    BenchEvalEnv.cli()
