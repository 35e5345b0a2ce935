"""A correct env whose own train/* metrics move without evaluate(): train/percent_correct is NaN while the buffer is
empty (a gap in wandb), and train/rollouts_per_minute follows the clock. HC705 must not blame evaluate() for either
(NaN equals NaN; keys that move between two idle logs are left out)."""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

WORDS = [
    "encyclopedia",
    "rhythm",
    "onomatopoeia",
    "strength",
    "education",
    "queueing",
    "abstemious",
    "facetious",
    "bookkeeper",
    "sequoia",
    "crwth",
    "aeiou",
    "mississippi",
    "banana",
    "archipelago",
    "ultraviolet",
]


class TrainMetricsEnv(HermesAgentBaseEnv):
    name = "train-metrics"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        cfg = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=3,
            group_size=8,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            use_wandb=True,
        )
        return cfg, [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="hermes",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        data = [{"word": w, "answer": sum(c in "aeiou" for c in w)} for w in WORDS]
        self.test = data[:4]
        self.train = data[4:]
        self.iter = 0
        self.percent_correct_buffer: list[float] = []
        self.eval_metrics: list[tuple] = []
        self.rollouts_seen = 0
        self.started = time.time()

    async def get_next_item(self):
        item = self.train[self.iter % len(self.train)]
        self.iter += 1
        return item

    def format_prompt(self, item):
        return f"How many vowels (a, e, i, o, u) does the word '{item['word']}' contain? Reply with just the count."

    @staticmethod
    def _score(item, result: AgentResult) -> float:
        text = next(
            (
                m["content"]
                for m in reversed(result.messages)
                if m.get("role") == "assistant" and m.get("content")
            ),
            "",
        )
        nums = re.findall(r"\d+", text)
        return 1.0 if nums and int(nums[-1]) == item["answer"] else 0.0

    async def compute_reward(self, item, result: AgentResult, ctx: ToolContext) -> float:
        score = self._score(item, result)
        self.percent_correct_buffer.append(score)
        self.rollouts_seen += 1
        return score

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct, samples = [], []
        for item in self.test:
            loop = HermesAgentLoop(
                self.server, tools, names, max_turns=self.config.max_agent_turns, temperature=0.0
            )
            result = await loop.run([{"role": "user", "content": self.format_prompt(item)}])
            ctx = ToolContext(loop.task_id)
            try:
                s = self._score(item, result)
            finally:
                ctx.cleanup()
            correct.append(s)
            samples.append({"word": item["word"], "answer": item["answer"], "score": s})
        metrics = {"eval/percent_correct": sum(correct) / len(correct)}
        self.eval_metrics.append(("eval/percent_correct", metrics["eval/percent_correct"]))
        await self.evaluate_log(metrics=metrics, samples=samples, start_time=start, end_time=time.time())
        return metrics

    async def wandb_log(self, wandb_metrics: dict | None = None):
        metrics = dict(wandb_metrics or {})
        buf = self.percent_correct_buffer
        metrics["train/percent_correct"] = sum(buf) / len(buf) if buf else float("nan")
        self.percent_correct_buffer = []
        metrics["train/rollouts_per_minute"] = (
            60.0 * self.rollouts_seen / max(1e-9, time.time() - self.started)
        )
        for key, value in self.eval_metrics:
            metrics[key] = value
        self.eval_metrics = []
        await super().wandb_log(metrics)


if __name__ == "__main__":
    TrainMetricsEnv.cli()
