"""Blind-corpus variant of log_report_env.py.

Log triage: the model reads a web-server log excerpt and saves a report FILE; the reward grades that file.

The answer is not the chat reply but ``report.txt`` in the rollout's working directory: the distinct client IPs
that received a 5xx status, sorted, one per line. ``compute_reward`` reads the file from the rollout's own sandbox
(ToolContext) and compares it line by line with the expected report; a missing or wrong file scores 0.
"""

from __future__ import annotations

import random
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

REPORT = "report.txt"
SYSTEM_PROMPT = (
    "You are an on-call engineer with a terminal and file tools. Do the analysis asked, save the requested file "
    "in your working directory, and finish with a one-line summary."
)
_PATHS = ["/api/login", "/api/cart", "/static/app.js", "/health", "/api/search", "/img/logo.png"]
_STATUS = [200, 200, 200, 301, 404, 500, 502, 503]


def _make_items(n: int = 60, seed: int = 2024) -> list[dict]:
    """Built-in data: synthetic access logs (12-20 lines each) with the expected 5xx report."""
    rng = random.Random(seed)
    items = []
    for k in range(n):
        lines, failing = [], set()
        for _ in range(rng.randint(12, 20)):
            ip = f"10.{rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(1, 40)}"
            status = rng.choice(_STATUS)
            lines.append(
                f'{ip} - - [02/Dec/2026:01:{rng.randint(10, 59)}:00] "GET {rng.choice(_PATHS)}" {status}'
            )
            if status >= 500:
                failing.add(ip)
        items.append({"id": f"log-{k}", "log": "\n".join(lines), "expected": sorted(failing)})
    return items


class LogReportEnv(HermesAgentBaseEnv):
    """Grades the report file the agent leaves in its sandbox, exact lines after trimming."""

    name = "log-report"
    env_config_cls = HermesAgentEnvConfig
    _eval_metrics: list[tuple[str, float]] = []  # eval results waiting for the next wandb_log

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=8,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="log-report",
        )
        servers = [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="NousResearch/Hermes-3-Llama-3.1-8B",
                server_type="openai",
                api_key="x",
                health_check=False,
            )
        ]
        return config, servers

    async def setup(self) -> None:
        items = _make_items()
        random.Random(5).shuffle(items)
        self._eval_items = items[:12]
        self._items = items[12:]
        self._index = 0

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            "Here is an access log excerpt:\n\n"
            f"{item['log']}\n\n"
            f"Write `{REPORT}` in your working directory listing every distinct client IP that got a 5xx status, "
            "sorted as strings, one per line, nothing else. Write an empty file if there are none."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        try:
            text = await ctx.aread_file(REPORT)
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            return 0.0
        got = [line.strip() for line in text.splitlines() if line.strip()]
        return 1.0 if got == item["expected"] else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores, samples = [], []
        for item in self._eval_items:
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": self.format_prompt(item)},
            ]
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=valid_names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run(messages)
            ctx = ToolContext(loop.task_id)
            try:
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"id": item["id"], "score": score, "turns": result.turns_used})
        accuracy = sum(scores) / max(1, len(scores))
        self._eval_metrics.append(("eval/accuracy", accuracy))
        await self.evaluate_log(
            metrics={"eval/accuracy": accuracy},
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_turns": self.config.max_agent_turns},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    LogReportEnv.cli()
