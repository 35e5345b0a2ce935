"""Derived from reorder_set_env.py.

Find every item of an inventory that needs reordering: the answer is a SET, graded by F1 with a format part.

Each item is an inventory table (SKU, stock, reorder level). The model lists the SKUs whose stock is strictly below
their reorder level, ``SKUS: A-101, B-202`` (or ``SKUS: none``), and may use the terminal to filter the table.
The reward is 0.1 for a parsable answer plus 0.9 times the F1 of the listed set against the gold set, so
listing every SKU (perfect recall, poor precision) earns little, and an exactly-right empty answer earns 1.0.
Tables deliberately hold rows whose stock EQUALS the reorder level: those do not need reordering.
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
    "You are an inventory assistant with a terminal. Finish with one line 'SKUS: <sku>, <sku>, ...' listing "
    "exactly the SKUs asked for, or 'SKUS: none'."
)
W_FORMAT, W_SET = 0.1, 0.9
_SKUS = re.compile(r"^\s*SKUS:\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)


def _make_items(n: int = 48, seed: int = 2024) -> list[dict]:
    """Built-in inventories of 6-9 rows; roughly a third low, some exactly at the level."""
    rng = random.Random(seed)
    items = []
    for idx in range(n):
        rows = []
        for r in range(rng.randint(6, 9)):
            level = rng.choice([5, 10, 12, 20, 25])
            kind = rng.random()
            if kind < 0.35:
                stock = rng.randint(0, level - 1)
            elif kind < 0.5:
                stock = level
            else:
                stock = rng.randint(level + 1, level * 3)
            rows.append({"sku": f"{'ABCDEFGHJ'[r]}-{rng.randint(100, 999)}", "stock": stock, "level": level})
        rng.shuffle(rows)
        items.append({"id": f"inv-{idx}", "rows": rows, "warehouse": f"WH{idx % 6 + 1}"})
    return items


def _gold(item: dict) -> set[str]:
    return {r["sku"] for r in item["rows"] if r["stock"] < r["level"]}


def _parse(text: str) -> set[str] | None:
    """The SKUs of the last 'SKUS:' line, upper-cased; None when there is no such line."""
    found = _SKUS.findall(text)
    if not found:
        return set()
    body = found[-1]
    if body.strip().lower() in ("none", "-", ""):
        return set()
    return {part.strip().upper() for part in re.split(r"[,\s]+", body) if part.strip()}


class ReorderSetEnv(HermesAgentBaseEnv):
    """Set-valued answers scored with F1 plus a format part."""

    name = "blind3-reorder-set"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=5,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-reorder-set",
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
        self._eval_items = [i for i in items if i["warehouse"] == "WH6"]
        self._items = [i for i in items if i["warehouse"] != "WH6"]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        table = "\n".join(f"{r['sku']} | {r['stock']} | {r['level']}" for r in item["rows"])
        return (
            f"Inventory of warehouse {item['warehouse']} (sku | stock | reorder level):\n{table}\n\n"
            "Which SKUs have stock strictly below their reorder level?"
        )

    @staticmethod
    def _final(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        given = _parse(self._final(result))
        if given is None:
            return 0.0
        gold = _gold(item)
        if not gold and not given:
            return 1.0
        hits = len(given & gold)
        precision = hits / len(given) if given else 0.0
        recall = hits / len(gold) if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        return round(W_FORMAT + W_SET * f1, 6)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
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
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        n = max(1, len(scores))
        metrics = {
            "eval/mean_f1_score": sum(scores) / n,
            "eval/exact_sets": sum(s == 1.0 for s in scores) / n,
        }
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(
            metrics=metrics,
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
    ReorderSetEnv.cli()
