"""Blind-corpus variant of invoice_json_env.py.

Invoice arithmetic with a STRUCTURED final answer: a JSON object whose fields are graded one by one.

The prompt is a plain-text invoice (line items, a discount, a tax rate). The model may compute in the terminal and
must end with a JSON object ``{"subtotal", "discount", "tax", "total", "currency"}``, in a ```json fence or bare.
``compute_reward`` parses the LAST JSON object of the final message; unparseable or non-object answers score 0;
otherwise each field is worth 1/5: numbers within 0.01 of the reference, the currency code exactly. A missing
field earns nothing.
"""

from __future__ import annotations

import json
import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You are an accounts assistant with a terminal. Compute carefully and end your reply with the JSON object "
    "requested, nothing after it."
)
FIELDS = ("subtotal", "discount", "tax", "total", "currency")
# Placeholders, not numbers: a model that only repeats the prompt's example must not earn a field by luck.
_FORMAT_EXAMPLE = '{"subtotal": <number>, "discount": <number>, "tax": <number>, "total": <number>, "currency": "<ISO code>"}'
_PRODUCTS = [
    ("Widget", 4.5),
    ("Cable", 12.99),
    ("Adapter", 7.25),
    ("Bracket", 2.1),
    ("Sensor", 38.0),
    ("Lamp", 19.95),
]
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def _make_items(n: int = 50, seed: int = 8) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for k in range(n):
        lines = [(name, rng.randint(1, 9), price) for name, price in rng.sample(_PRODUCTS, rng.randint(2, 4))]
        discount_pct, tax_pct = rng.choice([0, 5, 10, 15]), rng.choice([7, 19, 20, 21])
        currency = rng.choice(["EUR", "USD", "GBP"])
        subtotal = round(sum(q * p for _, q, p in lines), 2)
        discount = round(subtotal * discount_pct / 100, 2)
        tax = round((subtotal - discount) * tax_pct / 100, 2)
        text = "\n".join(f"{q} x {name} @ {p:.2f} {currency}" for name, q, p in lines)
        items.append(
            {
                "id": f"inv{k}",
                "invoice": f"{text}\nDiscount: {discount_pct}% of the subtotal\nTax: {tax_pct}% after discount",
                "expected": {
                    "subtotal": subtotal,
                    "discount": discount,
                    "tax": tax,
                    "total": round(subtotal - discount + tax, 2),
                    "currency": currency,
                },
            }
        )
    return items


def last_json_object(text: str) -> dict | None:
    """The last JSON object of the text: the last ```json fence, else the last balanced {...} that parses."""
    candidates = _FENCE.findall(text)
    if not candidates:
        starts = [i for i, ch in enumerate(text) if ch == "{"]
        decoder = json.JSONDecoder()
        for i in reversed(starts):
            try:
                obj, _ = decoder.raw_decode(text[i:])
            except json.JSONDecodeError:
                continue
            return obj if isinstance(obj, dict) else None
        return None
    try:
        obj = json.loads(candidates[-1])
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def field_ok(name: str, got: object, want: object) -> bool:
    if name == "currency":
        return isinstance(got, str) and got.strip().upper() == want
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    return abs(float(got) - float(want)) <= 0.01


class InvoiceJsonEnv(HermesAgentBaseEnv):
    """Per-field credit on a parsed JSON answer."""

    name = "invoice-json"
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
            wandb_name="invoice-json",
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
        random.Random(6).shuffle(items)
        self._eval_items = items[:10]
        self._items = items[10:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"Invoice:\n{item['invoice']}\n\nCompute the subtotal, the discount amount, the tax amount and the total "
            f"(all rounded to cents) and end with a JSON object of this shape:\n{_FORMAT_EXAMPLE}"
        )

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        answer = last_json_object(self._final_text(result))
        if answer is None:
            return 0.0
        expected = item["expected"]
        good = sum(field_ok(name, answer[name], expected[name]) for name in FIELDS if name in answer)
        return good / len(FIELDS)

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
                # eval is strict: the reply must be the bare JSON object, every field exactly right
                text = self._final_text(result).strip()
                try:
                    score = 1.0 if json.loads(text) == item["expected"] else 0.0
                except json.JSONDecodeError:
                    score = 0.0
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"id": item["id"], "score": score})
        metrics = {
            "eval/exact_rate": sum(s == 1.0 for s in scores) / max(1, len(scores)),
            "eval/field_accuracy": sum(scores) / max(1, len(scores)),
        }
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
    InvoiceJsonEnv.cli()
