"""Blind-corpus variant of csv_bench_env.py.

Evaluation-only benchmark: questions about a CSV file placed in the agent's sandbox before it starts.

There is no training data: ``get_next_item`` refuses, and ``evaluate`` is the whole env. For each task it writes
``sales.csv`` into the sandbox of the rollout's task id, runs the agent loop on THAT task id with the env's tools at
temperature 0, and scores the ``Answer:`` line against the value computed from the same rows (1% tolerance).
Results go to ``evaluate_log`` (``--env.data_dir_to_save_evals``).

    python csv_bench_env.py evaluate --env.data_dir_to_save_evals evals/csv-bench ...
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import statistics
import time
import uuid

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

DATA_FILE = "sales.csv"
EXPECTED_FILE = ".expected.json"
SYSTEM_PROMPT = (
    "You are a data analyst with a terminal and file tools. The data is in your working directory. Compute the "
    "answer from the file (do not guess) and finish with a line 'Answer: <number>'."
)
_ANSWER = re.compile(r"answer\s*:\s*(-?\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)
_REGIONS = ["north", "south", "east", "west"]


def _make_tasks(n: int = 24, seed: int = 101) -> list[dict]:
    rng = random.Random(seed)
    tasks = []
    for k in range(n):
        rows = [
            {
                "order": i + 1,
                "region": rng.choice(_REGIONS),
                "units": rng.randint(1, 40),
                "price": rng.choice([9.5, 12.0, 20.0, 35.25]),
            }
            for i in range(rng.randint(20, 40))
        ]
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=["order", "region", "units", "price"])
        writer.writeheader()
        writer.writerows(rows)
        region = rng.choice(_REGIONS)
        kind = k % 3
        if kind == 0:
            question = f"What is the total revenue (units * price) of the {region} region?"
            answer = sum(r["units"] * r["price"] for r in rows if r["region"] == region)
        elif kind == 1:
            question = "What is the median number of units per order?"
            answer = float(statistics.median(r["units"] for r in rows))
        else:
            question = f"How many orders of the {region} region have more than 20 units?"
            answer = float(sum(1 for r in rows if r["region"] == region and r["units"] > 20))
        tasks.append({"id": f"csv{k}", "csv": buf.getvalue(), "question": question, "answer": answer})
    return tasks


class CsvBenchEnv(HermesAgentBaseEnv):
    """Eval-only: the sandbox is prepared per task, the agent works in it, the answer is checked numerically."""

    name = "csv-bench"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=10,
            agent_temperature=0.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=1,
            total_steps=1,
            max_token_length=8192,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="csv-bench",
            data_dir_to_save_evals="evals/csv-bench",
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
        self._tasks = _make_tasks()

    async def get_next_item(self) -> dict:
        raise NotImplementedError(
            "csv-bench is an evaluation benchmark; run it with `evaluate`, not `serve`/`process`"
        )

    def format_prompt(self, item: dict) -> str:
        return f"`{DATA_FILE}` has the columns order, region, units, price. {item['question']}"

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        text = ""
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                text = msg["content"]
                break
        found = _ANSWER.findall(text)
        if not found:
            return 0.0
        guess = float(found[-1].replace(",", ""))
        expected = json.loads(await ctx.aread_file(EXPECTED_FILE))["answer"]
        return 1.0 if abs(guess - expected) <= max(0.01 * abs(expected), 1e-6) else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores, samples = [], []
        for task in self._tasks:
            task_id = str(uuid.uuid4())
            ctx = ToolContext(task_id)
            try:
                await ctx.awrite_file(DATA_FILE, task["csv"])
                # the task bundle carries its expected value, like benchmark tasks ship their tests
                await ctx.awrite_file(EXPECTED_FILE, json.dumps({"answer": task["answer"]}))
                loop = HermesAgentLoop(
                    server=self.server,
                    tool_schemas=tools,
                    valid_tool_names=valid_names,
                    max_turns=self.config.max_agent_turns,
                    task_id=task_id,
                    temperature=0.0,
                )
                messages = [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": self.format_prompt(task)},
                ]
                result = await loop.run(messages)
                score = await self.compute_reward(task, result, ctx)
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append(
                {"id": task["id"], "question": task["question"], "score": score, "turns": result.turns_used}
            )
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / max(1, len(scores))},
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_turns": self.config.max_agent_turns},
        )


if __name__ == "__main__":
    CsvBenchEnv.cli()
