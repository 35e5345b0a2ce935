"""Extract every email address from a noisy text; partial credit is the F1 of the extracted set.

The model answers with a final ``EMAILS:`` block, one address per line (``EMAILS: none`` when there are none).
``compute_reward`` compares the set it lists (lower-cased) with the item's addresses: F1 of precision and recall,
so both missing addresses and listing junk cost credit. Texts contain look-alike distractors (handles, URLs,
"name at domain dot com").
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
    "Extract information exactly as asked. You may use the terminal. Finish with a line 'EMAILS:' followed by "
    "one address per line, or 'EMAILS: none'."
)
_USERS = ["ana", "bo.li", "chen_w", "dmitri", "eva-k", "farah", "gus", "hana.s", "ivo", "jules"]
_DOMAINS = ["example.com", "mail.test.org", "corp.example.net", "uni.example.edu"]
_FILLER = [
    "Please forward the minutes before Friday.",
    "The meeting moved to room 4B.",
    "Our handle on the forum is @{u}.",
    "See https://{d}/contact for the form.",
    "You can also write to {u} at {d0} dot com.",
    "Invoices go through the portal, not by email.",
    "Ping {u} on chat if it is urgent.",
]


def _make_items(n: int = 60, seed: int = 77) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for k in range(n):
        emails = sorted({f"{rng.choice(_USERS)}@{rng.choice(_DOMAINS)}" for _ in range(rng.randint(0, 4))})
        parts = [
            f.format(u=rng.choice(_USERS), d=rng.choice(_DOMAINS), d0=rng.choice(["acme", "globex"]))
            for f in rng.sample(_FILLER, 4)
        ]
        for e in emails:
            display = e.upper() if rng.random() < 0.2 else e
            parts.insert(rng.randint(0, len(parts)), f"Contact {display} for details.")
        items.append({"id": f"e{k}", "text": " ".join(parts), "emails": emails})
    return items


def extracted(text: str) -> set[str] | None:
    """The addresses of the last EMAILS block (lower-cased), an empty set for 'none', None when there is no block."""
    idx = text.upper().rfind("EMAILS:")
    if idx < 0:
        return None
    block = text[idx + len("EMAILS:") :].strip()
    if block.lower().startswith("none"):
        return set()
    return {tok.strip().strip(",;<>").lower() for tok in re.split(r"[\s,;]+", block) if tok.strip()}


def f1(predicted: set[str], gold: set[str]) -> float:
    if not predicted and not gold:
        return 1.0
    hits = len(predicted & gold)
    if hits == 0:
        return 0.0
    precision, recall = hits / len(predicted), hits / len(gold)
    return 2 * precision * recall / (precision + recall)


class EntityExtractionEnv(HermesAgentBaseEnv):
    """Set extraction with F1 partial credit."""

    name = "entity-extraction"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=3072,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="entity-extraction",
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
        random.Random(21).shuffle(items)
        self._eval_items = items[:12]
        self._items = items[12:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"List every email address that appears literally in this text:\n\n{item['text']}\n\n"
            "Finish with 'EMAILS:' and one address per line, or 'EMAILS: none'."
        )

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        predicted = extracted(self._final_text(result))
        if predicted is None:
            return 0.0
        return f1(predicted, set(item["emails"]))

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
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"id": item["id"], "gold": item["emails"], "score": score})
        mean = sum(scores) / max(1, len(scores))
        self._eval_metrics.append(("eval/f1", mean))
        await self.evaluate_log(
            metrics={"eval/f1": mean},
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
    EntityExtractionEnv.cli()
