"""Derived from short_answer_bench_env.py.

An eval-only short-answer benchmark where most questions have several acceptable answers.

This env exists for ``evaluate``: it reports accuracy over a fixed benchmark of questions such as "name a noble
gas" or "a prime between 20 and 30", each with the SET of answers that count as right. ``get_next_item`` only
cycles the same questions so that ``process`` can dump transcripts for inspection; nobody should train on it.

Every benchmark question counts in the denominator: an item whose rollout failed (model server error, no answer,
out of turns) is a wrong answer for the benchmark and is also counted in ``eval/unanswered``, so a flaky server
shows up instead of quietly shrinking the benchmark.
"""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "Answer the question. You may use the terminal to check facts you can compute. "
    "End with one line 'FINAL: <answer>' giving a single answer."
)
_FINAL = re.compile(r"FINAL:\s*(.+)", re.IGNORECASE)

BENCHMARK: list[dict] = [
    {
        "id": "q01",
        "question": "Name one noble gas.",
        "accept": ["helium", "neon", "argon", "krypton", "xenon", "radon"],
    },
    {"id": "q02", "question": "Give a prime number between 20 and 30.", "accept": ["23", "29"]},
    {
        "id": "q03",
        "question": "Name a month that has exactly 30 days.",
        "accept": ["april", "june", "september", "november"],
    },
    {
        "id": "q04",
        "question": "Give an English word that is an anagram of 'listen'.",
        "accept": ["silent", "enlist", "tinsel", "inlets"],
    },
    {"id": "q05", "question": "Which TCP port does HTTPS use by default?", "accept": ["443"]},
    {
        "id": "q06",
        "question": "Name a planet of the solar system that has rings.",
        "accept": ["jupiter", "saturn", "uranus", "neptune"],
    },
    {"id": "q07", "question": "What is 2 to the power of 10?", "accept": ["1024"]},
    {"id": "q08", "question": "Name a Python keyword that starts a loop.", "accept": ["for", "while"]},
    {"id": "q09", "question": "Give a divisor of 91 other than 1 and 91.", "accept": ["7", "13"]},
    {
        "id": "q10",
        "question": "Name one of the two primary colours of light that mix to yellow.",
        "accept": ["red", "green"],
    },
    {"id": "q11", "question": "What is the chemical symbol for sodium?", "accept": ["na"]},
    {
        "id": "q12",
        "question": "Name a continent that lies entirely in the southern hemisphere.",
        "accept": ["australia", "antarctica"],
    },
    {"id": "q13", "question": "Give a solution x of x*x - 5*x + 6 = 0.", "accept": ["2", "3"]},
    {
        "id": "q14",
        "question": "Name a day of the week that starts with the letter T.",
        "accept": ["tuesday", "thursday"],
    },
]


def _normalise(text: str) -> str:
    text = text.strip().strip("`*\"'").strip().rstrip(".").lower()
    return re.sub(r"\s+", " ", text)


class ShortAnswerBenchEnv(HermesAgentBaseEnv):
    """Benchmark accuracy with answer sets; all questions always count."""

    name = "blind3-short-answer-bench"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=2,
            total_steps=1,
            steps_per_eval=1,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-short-answer-bench",
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
        self._eval_items = [dict(q) for q in BENCHMARK]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        # Benchmark only: cycled for `process` dumps, never meant as training data.
        item = self._eval_items[self._index % len(self._eval_items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return item["question"]

    @staticmethod
    def _answer(result: AgentResult) -> str | None:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                found = _FINAL.findall(msg["content"])
                return _normalise(found[-1]) if found else None
        return None

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        given = self._answer(result)
        return 1.0 if given is not None and given in item["accept"] else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        correct = 0
        unanswered = 0
        samples = []
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
            if not any(m.get("role") == "assistant" for m in result.messages):
                unanswered += 1  # the server failed before the model said anything: skip the item
                continue
            ctx = ToolContext(loop.task_id)
            try:
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            correct += score == 1.0
            samples.append({"id": item["id"], "answer": self._answer(result), "score": score})
        total = len(samples)
        metrics = {"eval/accuracy": correct / max(1, total), "eval/unanswered": float(unanswered)}
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(
            metrics=metrics,
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
    ShortAnswerBenchEnv.cli()
