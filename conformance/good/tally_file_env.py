"""Count words into a JSON file whose name only the prompt gives (`tally.json`); the reward reads that file from the
rollout's own sandbox and gives credit per word counted right. The item holds the expected record, not the path."""

from __future__ import annotations

import json
import random
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

OUTPUT_FILE = "tally.json"
WORDS = ("apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron")


def make_items(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for k in range(n):
        chosen = rng.sample(WORDS, 3)
        text = [w for w in chosen for _ in range(rng.randint(1, 4))]
        rng.shuffle(text)
        items.append(
            {"id": f"{seed}-{k}", "text": " ".join(text), "tally": {w: text.count(w) for w in chosen}}
        )
    return items


def credit(want: dict, got: object) -> float:
    if not isinstance(got, dict):
        return 0.0
    right = sum(1 for word, count in want.items() if got.get(word) == count)
    extra = sum(1 for word in got if word not in want)
    return max(0.0, (right - extra) / len(want))


class TallyFileEnv(HermesAgentBaseEnv):
    name = "tally-file"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["file"],
            max_agent_turns=4,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="hermes",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self) -> None:
        self.train_items = make_items(seed=11, n=40)
        self.eval_items = make_items(seed=12, n=4)
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"Text: {item['text']}\n\nCount how often each word occurs and save the counts as a JSON object in "
            f'`{OUTPUT_FILE}`, e.g. {{"oak": 2, "elm": 1}}.'
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        try:
            got = json.loads(await ctx.aread_file(OUTPUT_FILE))
        except (OSError, ValueError):
            return 0.0
        return credit(item["tally"], got)

    async def evaluate(self, *args, **kwargs) -> dict:
        start = time.time()
        scores = []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            scores.append(await self.score_rollout(item, result, task_id))
        metrics = {"eval/tally_credit": sum(scores) / len(scores)}
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())
        return metrics


if __name__ == "__main__":
    TallyFileEnv.cli()
