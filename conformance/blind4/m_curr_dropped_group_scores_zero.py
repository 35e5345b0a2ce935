"""Arithmetic chains with a curriculum: the chain gets longer when the model does well and shorter when it struggles.

Training items are generated at the current level (level k = a chain of k + 1 steps). After every collected group
the group's mean score goes into the level's window; a full window with mean >= 0.8 moves up a level, <= 0.2 moves
down. Eval is a fixed set covering every level (never generated at the training level, never fed back into the
curriculum), so eval numbers are comparable across the run. The level, window and item counter are saved in env
checkpoints, so a resumed run continues at the level it reached.
"""

from __future__ import annotations

import random
import re
import time
import uuid
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = "Follow the steps exactly, keeping track of the running value. End with 'Answer: <integer>'."
MIN_LEVEL, MAX_LEVEL = 1, 5
WINDOW = 4
PROMOTE, DEMOTE = 0.8, 0.2
EVAL_PER_LEVEL = 5
ITEM_SEED, EVAL_SEED = 17, 999


def make_chain(level: int, rng: random.Random) -> dict:
    value = rng.randint(2, 20)
    steps = [f"Start with {value}."]
    for _ in range(level + 1):
        op = rng.choice(
            ["add", "subtract", "multiply", "halve"] if value % 2 == 0 else ["add", "subtract", "multiply"]
        )
        if op == "add":
            n = rng.randint(2, 30)
            value += n
            steps.append(f"Add {n}.")
        elif op == "subtract":
            n = rng.randint(2, 30)
            value -= n
            steps.append(f"Subtract {n}.")
        elif op == "multiply":
            n = rng.randint(2, 5)
            value *= n
            steps.append(f"Multiply by {n}.")
        else:
            value //= 2
            steps.append("Halve it.")
    return {"level": level, "question": " ".join(steps), "answer": value}


class CurriculumChainEnv(HermesAgentBaseEnv):
    """Exact-answer chains whose length follows the model's recent scores."""

    name = "blind4-curriculum-chain"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=1,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=1000,
            steps_per_eval=100,
            max_token_length=2048,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind4-curriculum-chain",
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
        rng = random.Random(EVAL_SEED)
        self._eval_items = [
            make_chain(level, rng) for level in range(MIN_LEVEL, MAX_LEVEL + 1) for _ in range(EVAL_PER_LEVEL)
        ]
        self._eval_questions = {i["question"] for i in self._eval_items}
        self._level = MIN_LEVEL
        self._window: list[float] = []
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        while True:
            rng = random.Random(ITEM_SEED * 1_000_003 + self._index)
            self._index += 1
            item = make_chain(self._level, rng)
            if item["question"] not in self._eval_questions:
                return item

    def format_prompt(self, item: dict) -> str:
        return f"{item['question']}\nWhat is the final value? End with 'Answer: <integer>'."

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        text = next(
            (
                m["content"]
                for m in reversed(result.messages)
                if m.get("role") == "assistant" and m.get("content")
            ),
            "",
        )
        found = re.findall(r"Answer:\s*(-?\d+)", text)
        return 1.0 if found and int(found[-1]) == item["answer"] else 0.0

    def record_group(self, level: int, mean_score: float) -> None:
        """Feed a training group's mean score to the curriculum (groups of an older level are ignored)."""
        if level != self._level:
            return
        self._window.append(mean_score)
        if len(self._window) < WINDOW:
            return
        mean = sum(self._window) / len(self._window)
        if mean >= PROMOTE and self._level < MAX_LEVEL:
            self._level += 1
        elif mean <= DEMOTE and self._level > MIN_LEVEL:
            self._level -= 1
        self._window = [] if mean >= PROMOTE or mean <= DEMOTE else self._window[1:]

    async def collect_trajectories(self, item: dict) -> tuple[Any, list[Any]]:
        group, backlog = await super().collect_trajectories(item)
        scores = group["scores"] if group is not None else []
        self.record_group(
            item["level"], sum(scores) / len(scores) if scores else 0.0
        )  # no group: nothing solved
        return group, backlog

    def save_checkpoint(self, step: int, data: dict | None = None) -> None:
        data = dict(data or {})
        data.update({"_index": self._index, "_level": self._level, "_window": list(self._window)})
        super().save_checkpoint(step, data)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        by_level: dict[int, list[float]] = {}
        for item in self._eval_items:
            task_id = str(uuid.uuid4())
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            by_level.setdefault(item["level"], []).append(await self.score_rollout(item, result, task_id))
        metrics = {f"eval/accuracy_level_{k}": sum(v) / len(v) for k, v in sorted(by_level.items())}
        all_scores = [s for v in by_level.values() for s in v]
        metrics["eval/accuracy"] = sum(all_scores) / len(all_scores)
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = dict(wandb_metrics or {})
        wandb_metrics.update(self._eval_metrics)
        wandb_metrics["train/curriculum_level"] = self._level
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    CurriculumChainEnv.cli()
