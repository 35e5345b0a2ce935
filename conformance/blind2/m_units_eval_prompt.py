"""Derived from units_env.py (blind2 corpus).

Unit conversion with a tagged answer: format and correctness are both scored, with partial credit.

The system prompt asks for exactly one ``<answer>VALUE UNIT</answer>`` tag. The reward gives 0.2 for a well-formed
single tag in the requested unit and 0.8 for the value (full within 0.5 % relative error, half within 5 %). A reply
with several answer tags is ambiguous and gets no correctness credit: the model must commit to one answer.
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
    "You convert measurements between units. You may use the terminal to compute. End your reply with exactly one "
    "tag of the form <answer>VALUE UNIT</answer>, VALUE a decimal number rounded to two places, UNIT the symbol "
    "you were asked for."
)
W_FORMAT, W_VALUE = 0.2, 0.8

# (from name, from symbol, to name, to symbol, conversion function, value range)
CONVERSIONS = [
    ("kilometres", "km", "miles", "mi", lambda x: x / 1.609344, (1, 500)),
    ("miles", "mi", "kilometres", "km", lambda x: x * 1.609344, (1, 300)),
    ("kilograms", "kg", "pounds", "lb", lambda x: x / 0.45359237, (1, 200)),
    ("pounds", "lb", "kilograms", "kg", lambda x: x * 0.45359237, (1, 400)),
    ("degrees Celsius", "C", "degrees Fahrenheit", "F", lambda x: x * 9 / 5 + 32, (-40, 120)),
    ("degrees Fahrenheit", "F", "degrees Celsius", "C", lambda x: (x - 32) * 5 / 9, (-40, 250)),
    ("litres", "L", "US gallons", "gal", lambda x: x / 3.785411784, (1, 400)),
    ("inches", "in", "centimetres", "cm", lambda x: x * 2.54, (1, 120)),
]

_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.DOTALL)
_VALUE_UNIT = re.compile(r"^(-?\d+(?:\.\d+)?)\s*([A-Za-z]+)$")


def _make_items(per_kind: int = 15, seed: int = 2024) -> list[dict]:
    """Built-in dataset: random quantities for each conversion, with the exact converted value as gold."""
    rng = random.Random(seed)
    items = []
    for src, src_sym, dst, dst_sym, convert, (low, high) in CONVERSIONS:
        seen: set[float] = set()
        while len(seen) < per_kind:
            value = round(rng.uniform(low, high), 1)
            if value in seen:
                continue
            seen.add(value)
            items.append(
                {
                    "question": f"Convert {value} {src} ({src_sym}) to {dst} ({dst_sym}).",
                    "unit": dst_sym,
                    "answer": round(convert(value), 4),
                }
            )
    return items


def score_answer(text: str, unit: str, gold: float) -> float:
    """Format credit for one well-formed tag in the asked unit, value credit by relative error."""
    tags = _TAG.findall(text)
    if len(tags) != 1:
        return 0.0
    match = _VALUE_UNIT.match(tags[0])
    if not match:
        return 0.0
    value, got_unit = float(match.group(1)), match.group(2)
    if got_unit.lower() != unit.lower():
        return 0.0
    score = W_FORMAT
    error = abs(value - gold) / max(abs(gold), 1.0)
    if error <= 0.005:
        score += W_VALUE
    elif error <= 0.05:
        score += W_VALUE / 2
    return round(score, 6)


class UnitConversionEnv(HermesAgentBaseEnv):
    """Convert a quantity; answer in one tag; format and accuracy both count."""

    name = "unit-conversion"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=5,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="unit-conversion",
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
        self._eval_items = items[:24]
        self._items = items[24:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return item["question"]

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        return score_answer(self._final_text(result), item["unit"], item["answer"])

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
        for item in self._eval_items:
            messages = [{"role": "user", "content": self.format_prompt(item)}]
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
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        n = max(1, len(scores))
        metrics = {
            "eval/mean_score": sum(scores) / n,
            "eval/exact_rate": sum(s == W_FORMAT + W_VALUE for s in scores) / n,
        }
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    UnitConversionEnv.cli()
