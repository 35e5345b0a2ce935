"""Order a handful of records by a stated criterion; the answer is a ranking, graded pair by pair.

The table is in the prompt (the terminal is there for sorting it if the model likes). The model answers
``ORDER: a > b > c ...`` naming every record once. The reward gives 0.1 for a well-formed answer that names every
record exactly once, plus 0.9 times the share of pairs with different keys that it orders correctly (Kendall-style),
so a ranking with one swap still earns most of the credit. Records with equal keys may come in either order:
every ordering consistent with the keys is a correct answer.
"""

from __future__ import annotations

import random
import re
import time
from itertools import combinations

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You rank records. Read the table, work out the order (use the terminal if it helps), and finish with one "
    "line 'ORDER: <name> > <name> > ...' naming every record exactly once."
)
W_FORMAT, W_ORDER = 0.1, 0.9
_ORDER = re.compile(r"^\s*ORDER:\s*(.+?)\s*$", re.MULTILINE)

_CRITERIA = [
    ("released", "year of first release, oldest first", False),
    ("stars", "number of stars, most first", True),
    ("size_kb", "download size, smallest first", False),
]
_NAMES = [
    "ashgrove",
    "birchline",
    "copperfield",
    "dunmore",
    "elmstead",
    "fernhollow",
    "glenrock",
    "hawthorne",
    "ivybridge",
    "juniper",
    "kestrel",
    "larchmont",
]


def _make_items(n: int = 60, seed: int = 99) -> list[dict]:
    """Built-in tables of 5-7 fictional packages with three numeric columns (ties happen, as in real data)."""
    rng = random.Random(seed)
    items = []
    for idx in range(n):
        names = rng.sample(_NAMES, rng.randint(5, 7))
        rows = [
            {
                "name": name,
                "released": rng.randint(2012, 2020),
                "stars": rng.choice([120, 450, 450, 900, 1500, 3200, 7000]),
                "size_kb": rng.randint(40, 900),
            }
            for name in names
        ]
        key, description, descending = _CRITERIA[idx % len(_CRITERIA)]
        items.append(
            {
                "id": f"rank-{idx}",
                "rows": rows,
                "key": key,
                "description": description,
                "descending": descending,
            }
        )
    return items


class RankingEnv(HermesAgentBaseEnv):
    """Ranking answers with pairwise partial credit; ties may be broken either way."""

    name = "blind3-ranking"
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
            steps_per_eval=40,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-ranking",
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
        self._eval_items = items[:12]
        self._items = items[12:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        header = "name | released | stars | size_kb"
        lines = [f"{r['name']} | {r['released']} | {r['stars']} | {r['size_kb']}" for r in item["rows"]]
        return (
            f"Rank these packages by {item['description']}.\n\n{header}\n" + "\n".join(lines) + "\n\n"
            "Records with equal values may come in either order."
        )

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    def _rank_of(self, item: dict) -> dict[str, float]:
        """Each record's key, signed so that smaller means 'comes first', in a reference order (for the logs)."""
        sign = -1.0 if item["descending"] else 1.0
        ordered = sorted(item["rows"], key=lambda r: sign * r[item["key"]])
        return {r["name"]: sign * r[item["key"]] for r in ordered}

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        matches = _ORDER.findall(self._final_text(result))
        if not matches:
            return 0.0
        answer = [part.strip().lower() for part in matches[-1].split(">") if part.strip()]
        keys = self._rank_of(item)
        # Every record exactly once: a partial or padded list is not a ranking of this table.
        if sorted(answer) != sorted(keys):
            return 0.0
        position = {name: i for i, name in enumerate(answer)}
        pairs = [(a, b) for a, b in combinations(keys, 2) if keys[a] != keys[b]]
        if not pairs:
            return 1.0
        right = sum(1 for a, b in pairs if (position[a] < position[b]) == (keys[a] < keys[b]))
        return round(W_FORMAT + W_ORDER * right / len(pairs), 6)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
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
            scores.append(score)
            samples.append({"id": item["id"], "reference": " > ".join(self._rank_of(item)), "score": score})
        n = max(1, len(scores))
        metrics = {"eval/mean_score": sum(scores) / n, "eval/exact_rate": sum(s == 1.0 for s in scores) / n}
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
    RankingEnv.cli()
