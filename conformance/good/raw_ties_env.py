"""A correct raw atroposlib BaseEnv that drops a group whose scores all tie (returns None, as atroposlib's gsm8k
does). HC501 must not fail it: when no group comes back, the kit asks again with answers that differ per choice."""

from __future__ import annotations

import asyncio
import re
import time

from atroposlib.envs.base import BaseEnv, BaseEnvConfig, ScoredDataGroup
from atroposlib.envs.server_handling.server_manager import APIServerConfig

#: Like many upstream envs it scores a completion cut off by max_tokens like a finished one (HC507 warns).
EXPECTED_WARNINGS = ["HC507"]

SYSTEM = "Solve the problem. Put the final number in \\boxed{}."

PROBLEMS = [
    (f"A shop sells pens at {p} dollars each. How much do {n} pens cost in dollars?", p * n)
    for p in (2, 3, 5, 7)
    for n in (4, 6, 9, 11)
]


class RawTiesEnv(BaseEnv):
    name = "raw-ties"
    env_config_cls = BaseEnvConfig

    @classmethod
    def config_init(cls) -> tuple[BaseEnvConfig, list[APIServerConfig]]:
        cfg = BaseEnvConfig(
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            max_token_length=1024,
            use_wandb=True,
            steps_per_eval=20,
            total_steps=100,
        )
        return cfg, [
            APIServerConfig(
                base_url="http://localhost:9001/v1",
                model_name="hermes",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        data = [{"question": q, "answer": str(a)} for q, a in PROBLEMS]
        self.test = data[::4]
        self.train = [d for i, d in enumerate(data) if i % 4]
        self.iter = 0
        self.percent_correct_buffer: list[float] = []
        self.eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self):
        item = self.train[self.iter % len(self.train)]
        self.iter += 1
        return item

    @staticmethod
    def score_text(text: str, answer: str) -> float:
        text = text or ""
        boxed = re.findall(r"\\boxed\{\s*(-?\d+)\s*\}", text)
        if boxed:
            return 1.0 if boxed[-1] == answer else 0.0
        nums = re.findall(r"-?\d+", text)
        return 0.5 if nums and nums[-1] == answer else 0.0

    def tokenize(self, messages: list) -> dict:
        full = self.tokenizer.apply_chat_template(messages, tokenize=False)
        prompt = self.tokenizer.apply_chat_template(messages[:-1], tokenize=False, add_generation_prompt=True)
        tokens = self.tokenizer.encode(full, add_special_tokens=False)
        cut = len(self.tokenizer.encode(prompt, add_special_tokens=False))
        return {"tokens": tokens, "masks": [-100] * cut + tokens[cut:]}

    async def collect_trajectories(self, item) -> tuple[ScoredDataGroup | None, list]:
        chat = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": item["question"]}]
        completions = await self.server.chat_completion(
            messages=chat, n=self.config.group_size, max_tokens=256, temperature=1.0
        )
        group = ScoredDataGroup(
            tokens=[],
            masks=[],
            scores=[],
            messages=[],
            advantages=None,
            ref_logprobs=None,
            group_overrides=None,
            overrides=None,
            images=None,
        )
        for choice in completions.choices:
            text = choice.message.content or ""
            messages = chat + [{"role": "assistant", "content": text}]
            out = self.tokenize(messages)
            score = self.score_text(text, item["answer"])
            group["tokens"].append(out["tokens"])
            group["masks"].append(out["masks"])
            group["scores"].append(score)
            group["messages"].append(messages)
            self.percent_correct_buffer.append(1.0 if score == 1.0 else 0.0)
        if len(set(group["scores"])) == 1:
            return None, []  # all the same: no learning signal (atroposlib's gsm8k does the same)
        return group, []

    async def _eval_one(self, item) -> dict:
        completion = await self.server.chat_completion(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": item["question"]}],
            n=1,
            max_tokens=256,
            temperature=0.0,
            split="eval",
        )
        text = completion.choices[0].message.content or ""
        return {
            "question": item["question"],
            "gold": item["answer"],
            "response": text,
            "score": self.score_text(text, item["answer"]),
        }

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        samples = await asyncio.gather(*[self._eval_one(item) for item in self.test])
        acc = sum(s["score"] == 1.0 for s in samples) / len(samples)
        self.eval_metrics.append(("eval/percent_correct", acc))
        await self.evaluate_log(
            metrics={"eval/percent_correct": acc},
            samples=list(samples),
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_tokens": 256},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None):
        if wandb_metrics is None:
            wandb_metrics = dict()
        try:
            wandb_metrics["train/percent_correct"] = sum(self.percent_correct_buffer) / len(
                self.percent_correct_buffer
            )
        except ZeroDivisionError:
            pass
        self.percent_correct_buffer = list()
        for k, v in self.eval_metrics:
            wandb_metrics[k] = v
        self.eval_metrics = list()
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    RawTiesEnv.cli()
