"""Applied numeric problems (unit conversions, physics, finance) whose answers are real numbers, checked with a
relative tolerance.

The model may use a terminal as a calculator, then ends with ``Answer: <number>``. ``compute_reward`` reads the
last ``Answer:`` line of the final message (plain, signed or scientific notation, an optional unit after it) and
gives 1.0 when it is within 1% of the reference (or 1e-6 absolutely, for answers near zero), else 0. Many answers
are negative (temperatures below zero, losses), and the tolerance works on magnitudes.
"""

from __future__ import annotations

import math
import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

REL_TOL, ABS_TOL = 1e-2, 1e-6
SYSTEM_PROMPT = (
    "Solve the problem. You may use the terminal (python3 -c ...) as a calculator. Finish with a final line "
    "'Answer: <number>' using a plain decimal number (no fractions)."
)
_ANSWER = re.compile(r"answer\s*:\s*\$?\s*([-+\u2212]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)", re.IGNORECASE)


def _make_items(seed: int = 31) -> list[dict]:
    """Built-in data: four problem families with generated parameters (no download)."""
    rng = random.Random(seed)
    items: list[dict] = []
    for f in rng.sample(range(-40, 100), 24):
        items.append(
            {"question": f"Convert {f} degrees Fahrenheit to degrees Celsius.", "answer": (f - 32) * 5 / 9}
        )
    for _ in range(20):
        v0, a, t = rng.randint(-20, 20), rng.choice([-9.8, -3.5, 2.0, 4.5]), rng.randint(2, 9)
        items.append(
            {
                "question": f"A cart starts at x = 0 m with velocity {v0} m/s and constant acceleration {a} m/s^2. "
                f"What is its position in metres after {t} s?",
                "answer": v0 * t + 0.5 * a * t * t,
            }
        )
    for _ in range(20):
        p, r, years = rng.choice([1000, 2500, 5000, 12000]), rng.choice([-6, -3, 2, 4, 7]), rng.randint(2, 10)
        items.append(
            {
                "question": f"An investment of {p} dollars changes by {r}% per year, compounded yearly. What is the "
                f"total gain (negative for a loss) in dollars after {years} years?",
                "answer": p * ((1 + r / 100) ** years - 1),
            }
        )
    for _ in range(16):
        r1, r2 = rng.randint(10, 470), rng.randint(10, 470)
        items.append(
            {
                "question": f"What is the resistance in ohms of a {r1} ohm and a {r2} ohm resistor in parallel?",
                "answer": r1 * r2 / (r1 + r2),
            }
        )
    unique = list(
        {item["question"]: item for item in items}.values()
    )  # a repeated draw would sit in both splits
    for k, item in enumerate(unique):
        item["id"] = f"n{k}"
    return unique


def parse_answer(text: str) -> float | None:
    """The number on the last 'Answer:' line, or None."""
    found = _ANSWER.findall(text)
    if not found:
        return None
    try:
        return float(found[-1].replace(",", "").replace("\u2212", "-"))
    except ValueError:
        return None


def within_tolerance(guess: float, reference: float) -> bool:
    return math.isfinite(guess) and abs(guess - reference) <= max(REL_TOL * abs(reference), ABS_TOL)


class NumericToleranceEnv(HermesAgentBaseEnv):
    """Real-valued answers graded with a relative tolerance on magnitude."""

    name = "numeric-tolerance"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=6,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=3072,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="numeric-tolerance",
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
        random.Random(8).shuffle(items)
        self._eval_items = items[:16]
        self._items = items[16:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"{item['question']}\nEnd with 'Answer: <number>'."

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        guess = parse_answer(self._final_text(result))
        return 1.0 if guess is not None and within_tolerance(guess, item["answer"]) else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        correct, samples = 0, []
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
            samples.append({"question": item["question"], "reference": item["answer"], "score": score})
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
    NumericToleranceEnv.cli()
