"""Put things in order: the model ranks five to seven entities by a numeric property and answers with a list.

Items come from built-in tables (chemical elements by atomic number, historical events by year, planets by mean
distance from the Sun, mountains by height). The answer is the last numbered list in the final reply. It must name
every entity exactly once; the score is then the share of entity pairs in the right relative order (1.0 for the
exact order), so a nearly right ranking earns more than a reversed one.
"""

from __future__ import annotations

import itertools
import random
import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You rank items. Think it through, then end with the full ranking as a numbered list, one item per line "
    "('1. X', '2. Y', ...), using the names exactly as given."
)

TABLES: dict[str, tuple[str, bool, dict[str, float]]] = {
    "elements": (
        "from the lowest to the highest atomic number",
        False,
        {
            "Hydrogen": 1,
            "Helium": 2,
            "Lithium": 3,
            "Carbon": 6,
            "Nitrogen": 7,
            "Oxygen": 8,
            "Neon": 10,
            "Sodium": 11,
            "Magnesium": 12,
            "Aluminium": 13,
            "Silicon": 14,
            "Sulfur": 16,
            "Chlorine": 17,
            "Argon": 18,
            "Potassium": 19,
            "Calcium": 20,
            "Iron": 26,
            "Copper": 29,
            "Zinc": 30,
            "Silver": 47,
            "Tin": 50,
            "Iodine": 53,
            "Platinum": 78,
            "Gold": 79,
            "Mercury": 80,
            "Lead": 82,
            "Uranium": 92,
        },
    ),
    "events": (
        "from the earliest to the latest",
        False,
        {
            "Signing of the Magna Carta": 1215,
            "Fall of Constantinople": 1453,
            "Columbus reaches the Americas": 1492,
            "Luther's ninety-five theses": 1517,
            "Treaty of Westphalia": 1648,
            "Newton's Principia published": 1687,
            "US Declaration of Independence": 1776,
            "Storming of the Bastille": 1789,
            "Battle of Waterloo": 1815,
            "Darwin's Origin of Species published": 1859,
            "First powered flight": 1903,
            "Start of World War I": 1914,
            "Moon landing": 1969,
            "Fall of the Berlin Wall": 1989,
            "Launch of the World Wide Web": 1991,
        },
    ),
    "planets": (
        "from the closest to the Sun to the farthest",
        False,
        {
            "Mercury": 0.39,
            "Venus": 0.72,
            "Earth": 1.0,
            "Mars": 1.52,
            "Jupiter": 5.2,
            "Saturn": 9.54,
            "Uranus": 19.2,
            "Neptune": 30.06,
        },
    ),
    "mountains": (
        "from the highest to the lowest summit",
        True,
        {
            "Mount Everest": 8849,
            "K2": 8611,
            "Kangchenjunga": 8586,
            "Aconcagua": 6961,
            "Denali": 6190,
            "Kilimanjaro": 5895,
            "Mont Blanc": 4806,
            "Matterhorn": 4478,
            "Mount Fuji": 3776,
            "Mount Kosciuszko": 2228,
            "Ben Nevis": 1345,
        },
    ),
}

_LINE = re.compile(r"^\s*(\d+)[.)]\s*(.+?)\s*$")


def _make_items(seed: int = 99) -> list[dict]:
    """Built-in dataset: random subsets of each table, shown shuffled, with the sorted order as gold."""
    rng = random.Random(seed)
    items = []
    seen = set()
    for table, (direction, descending, values) in TABLES.items():
        names = sorted(values)
        for _ in range(40):
            k = rng.randint(5, min(7, len(names)))
            chosen = rng.sample(names, k)
            key = (table, frozenset(chosen))
            if key in seen:
                continue
            seen.add(key)
            gold = sorted(chosen, key=lambda n: values[n], reverse=descending)
            items.append({"table": table, "direction": direction, "shown": chosen, "gold": gold})
    return items


def parse_ranking(text: str) -> list[str]:
    """The last numbered list in ``text``, as names in list order."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            current.append(match.group(2).strip().rstrip("."))
        elif current and line.strip():
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks[-1] if blocks else []


def score_ranking(answer: list[str], gold: list[str]) -> float:
    """Share of concordant pairs; 0.0 unless the answer names every gold entity exactly once."""
    by_lower = {g.lower(): g for g in gold}
    named = [by_lower.get(a.lower()) for a in answer]
    if None in named or len(named) != len(gold) or len(set(named)) != len(gold):
        return 0.0
    position = {name: i for i, name in enumerate(named)}
    pairs = list(itertools.combinations(gold, 2))
    concordant = sum(1 for a, b in pairs if position[a] < position[b])
    return round(concordant / len(pairs), 6)


class RankingEnv(HermesAgentBaseEnv):
    """Rank entities by a property; partial credit by pairwise order."""

    name = "ranking"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=2,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=150,
            steps_per_eval=50,
            max_token_length=3072,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="ranking",
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
        random.Random(3).shuffle(items)
        self._eval_items = items[:30]
        self._items = items[30:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        listed = "\n".join(f"- {name}" for name in item["shown"])
        return f"Rank these {item['table']} {item['direction']}:\n{listed}"

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        return score_ranking(parse_ranking(self._final_text(result)), item["gold"])

    async def evaluate(self, *args, **kwargs) -> None:
        mean = await self.evaluate_items(self._eval_items, "eval/pairwise_accuracy")
        self._eval_metrics.append(("eval/pairwise_accuracy", mean))

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    RankingEnv.cli()
