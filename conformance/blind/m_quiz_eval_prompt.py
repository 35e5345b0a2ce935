"""Blind-corpus variant of element_quiz_env.py.

Chemistry short answers: name the element from its symbol or atomic number; case-insensitive exact match.

The model answers inside ``<answer>...</answer>``. ``compute_reward`` case-folds and trims the tagged answer and
compares it with the element's name (British spellings accepted). Two questions are asked about every element,
so the train/eval split is made by ELEMENT: an element's questions are all in training or all in evaluation.
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
    "You are a chemistry quiz player. Put only the element's English name inside <answer></answer>."
)
_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)

_ELEMENTS = [
    (1, "H", "Hydrogen"),
    (2, "He", "Helium"),
    (3, "Li", "Lithium"),
    (4, "Be", "Beryllium"),
    (5, "B", "Boron"),
    (6, "C", "Carbon"),
    (7, "N", "Nitrogen"),
    (8, "O", "Oxygen"),
    (9, "F", "Fluorine"),
    (10, "Ne", "Neon"),
    (11, "Na", "Sodium"),
    (12, "Mg", "Magnesium"),
    (13, "Al", "Aluminum"),
    (14, "Si", "Silicon"),
    (15, "P", "Phosphorus"),
    (16, "S", "Sulfur"),
    (17, "Cl", "Chlorine"),
    (18, "Ar", "Argon"),
    (19, "K", "Potassium"),
    (20, "Ca", "Calcium"),
    (22, "Ti", "Titanium"),
    (24, "Cr", "Chromium"),
    (25, "Mn", "Manganese"),
    (26, "Fe", "Iron"),
    (27, "Co", "Cobalt"),
    (28, "Ni", "Nickel"),
    (29, "Cu", "Copper"),
    (30, "Zn", "Zinc"),
    (33, "As", "Arsenic"),
    (35, "Br", "Bromine"),
    (36, "Kr", "Krypton"),
    (47, "Ag", "Silver"),
    (50, "Sn", "Tin"),
    (53, "I", "Iodine"),
    (54, "Xe", "Xenon"),
    (55, "Cs", "Cesium"),
    (74, "W", "Tungsten"),
    (78, "Pt", "Platinum"),
    (79, "Au", "Gold"),
    (80, "Hg", "Mercury"),
    (82, "Pb", "Lead"),
    (92, "U", "Uranium"),
]
_ALIASES = {"aluminum": {"aluminium"}, "sulfur": {"sulphur"}, "cesium": {"caesium"}}


def _make_items() -> list[dict]:
    items = []
    for number, symbol, name in _ELEMENTS:
        items.append({"element": name, "question": f"Which element has the chemical symbol {symbol}?"})
        items.append({"element": name, "question": f"Which element has atomic number {number}?"})
    return items


def accepted(name: str) -> set[str]:
    key = name.casefold()
    return {key} | _ALIASES.get(key, set())


class ElementQuizEnv(HermesAgentBaseEnv):
    """Short factual answers, compared case-insensitively after trimming."""

    name = "element-quiz"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=3,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=100,
            steps_per_eval=25,
            max_token_length=1024,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="element-quiz",
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
        elements = sorted({item["element"] for item in items})
        random.Random(2).shuffle(elements)
        held_out = set(elements[:8])
        self._eval_items = [item for item in items if item["element"] in held_out]
        self._items = [item for item in items if item["element"] not in held_out]
        random.Random(3).shuffle(self._items)
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"{item['question']} Answer with the element's name in <answer></answer> tags."

    @staticmethod
    def _tagged(result: AgentResult) -> str | None:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                found = _TAG.findall(msg["content"])
                return found[-1] if found else None
        return None

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        answer = self._tagged(result)
        if answer is None:
            return 0.0
        return 1.0 if answer.strip().casefold() in accepted(item["element"]) else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        correct, samples = 0, []
        for item in self._eval_items:
            messages = [{"role": "user", "content": item["question"]}]
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
            samples.append({"question": item["question"], "answer": self._tagged(result), "score": score})
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
    ElementQuizEnv.cli()
