"""Arithmetic with a terminal: the model works out an integer expression (the terminal is there to help) and answers.

Written exactly the way the hermes-atropos-environments guide says, so it doubles as the example that the
conformance kit gates:

    pytest --hermes-conformance environments/arithmetic_env.py
    python environments/arithmetic_env.py process --env.total_steps 1 --env.group_size 2 ...
"""

from __future__ import annotations

import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You are a careful assistant with a terminal. Use the terminal tool to compute when it helps, "
    "then give the final answer on its own last line as 'Answer: <integer>'."
)


def _make_items(n: int = 120, seed: int = 1234) -> list[dict]:
    """Built-in dataset: deterministic integer expressions with their values (no download needed)."""
    rng = random.Random(seed)
    items = []
    seen = set()
    while len(items) < n:
        a, b, c = rng.randint(11, 999), rng.randint(11, 99), rng.randint(1, 500)
        op = rng.choice(["+", "-"])
        expression = f"{a} * {b} {op} {c}"
        if expression in seen:
            continue
        seen.add(expression)
        items.append(
            {"question": f"What is {expression}?", "expression": expression, "answer": str(eval(expression))}
        )
    return items


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


class ArithmeticTerminalEnv(HermesAgentBaseEnv):
    """Exact-answer arithmetic; full credit for the right integer, a little for trying the terminal."""

    name = "arithmetic-terminal"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=6,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=100,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="arithmetic-terminal",
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
        random.Random(7).shuffle(items)
        eval_size = max(20, int(len(items) * 0.1))
        self._eval_items = items[:eval_size]
        self._items = items[eval_size:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"{item['question']} Reply with 'Answer: <integer>' on the last line."

    @staticmethod
    def _final_answer(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    @staticmethod
    def _used_terminal(result: AgentResult) -> bool:
        for msg in result.messages:
            for tc in msg.get("tool_calls") or []:
                if tc.get("function", {}).get("name") == "terminal":
                    return True
        return False

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        text = self._final_answer(result)
        marked = re.findall(r"Answer:\s*(-?[\d,]+(?:\.\d+)?)", text)
        candidates = marked or _NUMBER.findall(text)
        # Compare numbers as numbers: "35,736", "35736" and "35736.0" are the same answer.
        guess = float(candidates[-1].replace(",", "")) if candidates else None
        if guess is not None and guess == float(item["answer"]):
            return 1.0
        return 0.1 if self._used_terminal(result) else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        correct = 0
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
            ctx = ToolContext(loop.task_id)
            try:
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            correct += score == 1.0
            samples.append({"question": item["question"], "answer": item["answer"], "score": score})
        accuracy = correct / max(1, len(self._eval_items))
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
    ArithmeticTerminalEnv.cli()
