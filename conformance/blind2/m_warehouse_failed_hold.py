"""Derived from warehouse_env.py (blind2 corpus).

Warehouse clerk with several toolsets: stock (``warehouse``), prices (``catalog``) and a terminal.

Two kinds of task: value the stock of a few SKUs (look up stock and prices, multiply, add), or place a hold on
some units and report how many stay available. Holds are kept per rollout (keyed by the tool's ``task_id``), so
the rollouts of a group, which run at the same time, never see each other's holds. The reward checks the final
number and, for holds, that the right hold was really placed (a ``hold_units`` call in the transcript).
"""

from __future__ import annotations

import json
import random
import re
import time
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You are a warehouse clerk. Use the warehouse and catalog tools to look things up (the terminal is there for "
    "arithmetic), then finish with a line 'Answer: <number>'."
)

_rng = random.Random(404)
STOCK: dict[str, int] = {f"SKU-{n:03d}": _rng.randint(5, 400) for n in range(100, 160)}
PRICES: dict[str, float] = {sku: round(_rng.uniform(0.5, 120.0), 2) for sku in STOCK}
_HOLDS: dict[tuple[str, str], int] = {}  # (task_id, sku) -> units held by that rollout


def stock_level(sku: str, task_id: str) -> str:
    """Units of a SKU available in the warehouse (after your holds).

    Args:
        sku: The stock keeping unit, e.g. SKU-123.
    """
    if sku not in STOCK:
        return json.dumps({"error": f"unknown SKU {sku!r}"})
    return json.dumps({"sku": sku, "available": STOCK[sku] - _HOLDS.get((task_id, sku), 0)})


def hold_units(sku: str, quantity: int, task_id: str) -> str:
    """Put units of a SKU on hold for a customer.

    Args:
        sku: The stock keeping unit.
        quantity: How many units to hold (1 or more).
    """
    if sku not in STOCK:
        return json.dumps({"error": f"unknown SKU {sku!r}"})
    available = STOCK[sku] - _HOLDS.get((task_id, sku), 0)
    if not 1 <= quantity <= available:
        return json.dumps({"error": f"quantity must be 1 to {available}"})
    _HOLDS[(task_id, sku)] = _HOLDS.get((task_id, sku), 0) + quantity
    return json.dumps({"sku": sku, "held": quantity, "ok": True})


def unit_price(sku: str) -> str:
    """Catalog unit price of a SKU in dollars.

    Args:
        sku: The stock keeping unit.
    """
    if sku not in PRICES:
        return json.dumps({"error": f"unknown SKU {sku!r}"})
    return json.dumps({"sku": sku, "price": PRICES[sku]})


def _register(fn: Any, toolset: str) -> None:
    """Register ``fn`` on the default registry, replacing a tool of that name left by an earlier import."""
    try:
        registry.unregister(fn.__name__)
    except KeyError:
        pass
    registry.tool(fn, toolset=toolset)


def _register_tools() -> None:
    """This file's tools on the default registry (again at setup, so a sibling env imported later cannot shadow
    them while this env runs)."""
    _register(stock_level, "warehouse")
    _register(hold_units, "warehouse")
    _register(unit_price, "catalog")


_register_tools()


def _make_items(seed: int = 12) -> list[dict]:
    """Built-in dataset: 60 valuation questions and 60 hold requests over the built-in stock and prices."""
    rng = random.Random(seed)
    skus = sorted(STOCK)
    items = []
    for _ in range(60):
        chosen = sorted(rng.sample(skus, rng.randint(2, 4)))
        total = round(sum(STOCK[s] * PRICES[s] for s in chosen), 2)
        items.append({"kind": "value", "skus": chosen, "answer": total})
    for _ in range(60):
        sku = rng.choice(skus)
        quantity = rng.randint(1, STOCK[sku] // 2)
        items.append({"kind": "hold", "skus": [sku], "quantity": quantity, "answer": STOCK[sku] - quantity})
    rng.shuffle(items)
    return items


def _successful_holds(result: AgentResult) -> list[tuple[str, int]]:
    """(sku, quantity) of every hold_units call that was answered."""
    calls: dict[str, tuple[str, int]] = {}
    holds = []
    for msg in result.messages:
        for tc in msg.get("tool_calls") or []:
            if tc["function"]["name"] == "hold_units":
                try:
                    args = json.loads(tc["function"]["arguments"])
                    calls[tc["id"]] = (str(args["sku"]), int(args["quantity"]))
                except (ValueError, KeyError, TypeError):
                    continue
        if msg.get("role") == "tool" and msg.get("tool_call_id") in calls:
            holds.append(calls[msg["tool_call_id"]])
    return holds


class WarehouseEnv(HermesAgentBaseEnv):
    """Tool use across two custom toolsets plus the terminal; exact numeric answers."""

    name = "warehouse"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["warehouse", "catalog", "terminal"],
            max_agent_turns=12,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=120,
            steps_per_eval=40,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="warehouse",
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
        _register_tools()
        items = _make_items()
        self._eval_items = items[:20]
        self._items = items[20:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        if item["kind"] == "value":
            return f"What is the total value in dollars of all stock of {', '.join(item['skus'])} (units x price)?"
        return (
            f"A customer wants {item['quantity']} units of {item['skus'][0]}. Put them on hold, then tell me how "
            "many units of it are still available."
        )

    @staticmethod
    def _final_number(result: AgentResult) -> float | None:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                found = re.findall(r"Answer:\s*\$?(-?[\d,]+(?:\.\d+)?)", msg["content"])
                return float(found[-1].replace(",", "")) if found else None
        return None

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        guess = self._final_number(result)
        if guess is None or abs(guess - item["answer"]) > 0.011:
            return 0.0
        if item["kind"] == "hold" and (item["skus"][0], item["quantity"]) not in _successful_holds(result):
            return 0.0
        return 1.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        mean = await self.evaluate_items(self._eval_items, "eval/accuracy")
        self._eval_metrics.append(("eval/accuracy", mean))
        self._eval_metrics.append(("eval/seconds", time.time() - start))

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    WarehouseEnv.cli()
