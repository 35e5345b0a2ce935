"""Derived from number_sets_env.py (blind2 corpus).

Multi-answer questions: list every integer with a property in a range; scored by F1 against the exact set.

Questions ask for all primes, perfect squares, divisors, multiples or palindromes in a small range. The answer is
the comma-separated list after 'Answer:' on the last line. Precision and recall both count (F1), so listing the
whole range is not a strategy and missing one member costs a little, not everything. The terminal is offered.
"""

from __future__ import annotations

import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You answer questions whose answer is a set of integers. You may use the terminal. Finish with one line "
    "'Answer: a, b, c' listing every member once, in increasing order (write 'Answer: none' for an empty set)."
)
_ANSWER = re.compile(r"Answer:\s*(.*)$", re.IGNORECASE | re.MULTILINE)


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


def _make_items(seed: int = 77) -> list[dict]:
    """Built-in dataset: (question, gold set) for five kinds of property over random ranges."""
    rng = random.Random(seed)
    items = []
    seen = set()
    while len(items) < 160:
        kind = rng.choice(["primes", "squares", "divisors", "multiples", "palindromes"])
        if kind == "divisors":
            n = rng.randint(12, 400)
            question, gold = f"List all positive divisors of {n}.", [d for d in range(1, n + 1) if n % d == 0]
        elif kind == "multiples":
            k, lo = rng.randint(3, 19), rng.randint(1, 300)
            hi = lo + rng.randint(30, 90)
            question = f"List all multiples of {k} between {lo} and {hi} inclusive."
            gold = [x for x in range(lo, hi + 1) if x % k == 0]
        else:
            lo = rng.randint(1, 900)
            hi = lo + rng.randint(20, 80)
            test = {
                "primes": _is_prime,
                "squares": lambda x: int(x**0.5) ** 2 == x,
                "palindromes": lambda x: str(x) == str(x)[::-1],
            }[kind]
            noun = "perfect square" if kind == "squares" else kind[:-1]
            question = f"List all {noun}s between {lo} and {hi} inclusive."
            question = question.replace("primes", "prime numbers").replace(
                "palindromes", "palindromic numbers"
            )
            gold = [x for x in range(lo, hi) if test(x)]
        if question in seen:
            continue
        seen.add(question)
        items.append({"kind": kind, "question": question, "gold": gold})
    return items


def parse_set(text: str) -> set[int] | None:
    """The integers after the last 'Answer:'; None when there is no answer line."""
    lines = _ANSWER.findall(text)
    if not lines:
        return None
    body = lines[-1].strip()
    if body.lower().startswith("none"):
        return set()
    return {int(x) for x in re.findall(r"-?\d+", body)}


def f1(guess: set[int], gold: set[int]) -> float:
    """F1 of two sets; two empty sets agree fully."""
    if not guess and not gold:
        return 1.0
    hits = len(guess & gold)
    if hits == 0:
        return 0.0
    precision, recall = hits / len(guess), hits / len(gold)
    return round(2 * precision * recall / (precision + recall), 6)


class NumberSetsEnv(HermesAgentBaseEnv):
    """Answer with the complete set; F1 reward."""

    name = "number-sets"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=6,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=200,
            steps_per_eval=40,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="number-sets",
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
        random.Random(13).shuffle(items)
        self._eval_items = items[:32]
        self._items = items[32:]
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
        guess = parse_set(self._final_text(result))
        if guess is None:
            return 0.0
        return f1(guess, set(item["gold"]))

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        mean = await self.evaluate_items(self._eval_items, "eval/mean_f1")
        self._eval_metrics.append(("eval/mean_f1", mean))
        self._eval_metrics.append(("eval/seconds", time.time() - start))

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    NumberSetsEnv.cli()
