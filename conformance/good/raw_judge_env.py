"""Raw atroposlib BaseEnv whose reward is an LLM judge (no agent loop): each completion is judged by the same
server in a fresh conversation, on a 0-10 scale. A judge that fails raises (the trainer sees the outage); one
that answers off-format gives no credit (counted in a metric); never a made-up score."""

from __future__ import annotations

import re
import time

from atroposlib.envs.base import BaseEnv, BaseEnvConfig, ScoredDataItem
from atroposlib.envs.server_handling.server_manager import APIServerConfig

QUESTIONS = [
    ("Name a primary colour.", "red, blue or yellow"),
    ("Name a planet with rings.", "Saturn, Jupiter, Uranus or Neptune"),
    ("Name a noble gas.", "helium, neon, argon, krypton, xenon or radon"),
    ("Name an even prime number.", "2"),
    ("Name a mammal that can fly.", "a bat"),
    ("Name a language spoken in Switzerland.", "German, French, Italian or Romansh"),
]
JUDGE = (
    "Question: {question}\nAcceptable: {accept}\nReply: {reply}\n"
    "How acceptable is the reply, from 0 to 10? Answer with the number only."
)


class RawJudgeEnv(BaseEnv):
    """Open questions with several right answers, judged by an LLM."""

    name = "raw-judge"
    env_config_cls = BaseEnvConfig

    @classmethod
    def config_init(cls) -> tuple[BaseEnvConfig, list[APIServerConfig]]:
        config = BaseEnvConfig(
            group_size=2, tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B", max_token_length=1024
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
        items = [{"question": q, "accept": a} for q, a in QUESTIONS]
        self.eval_items, self.train_items = items[:2], items[2:]
        self.index = 0
        self.judge_failures = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    async def judge(self, item: dict, reply: str) -> float:
        """The judge's 0-10 score over 10; 0.0 (counted) when it answers off-format. A failed call raises."""
        prompt = JUDGE.format(question=item["question"], accept=item["accept"], reply=reply[:1000])
        out = await self.server.chat_completion(
            messages=[{"role": "user", "content": prompt}], n=1, temperature=0.0, max_tokens=8
        )
        match = re.fullmatch(r"\s*(\d{1,2})\s*", out.choices[0].message.content or "")
        if match is None or int(match.group(1)) > 10:
            self.judge_failures += 1
            return 0.0
        return int(match.group(1)) / 10

    def tokenize(self, messages: list[dict]) -> tuple[list[int], list[int]]:
        full = self.tokenizer.apply_chat_template(messages, tokenize=False)
        prompt = self.tokenizer.apply_chat_template(messages[:-1], tokenize=False, add_generation_prompt=True)
        tokens = self.tokenizer.encode(full, add_special_tokens=False)
        cut = len(self.tokenizer.encode(prompt, add_special_tokens=False))
        return tokens, [-100] * cut + tokens[cut:]

    async def collect_trajectory(self, item: dict) -> tuple[ScoredDataItem, list]:
        messages = [{"role": "user", "content": item["question"]}]
        out = await self.server.chat_completion(messages=messages, n=1, temperature=1.0, max_tokens=64)
        choice = out.choices[0]
        reply = choice.message.content or ""
        score = 0.0 if choice.finish_reason == "length" else await self.judge(item, reply)
        messages.append({"role": "assistant", "content": reply})
        tokens, masks = self.tokenize(messages)
        return ScoredDataItem(
            tokens=tokens,
            masks=masks,
            scores=score,
            messages=messages,
            advantages=None,
            ref_logprobs=None,
            group_overrides=None,
            overrides=None,
            images=None,
        ), []

    async def evaluate(self, *args, **kwargs) -> None:
        start, scores = time.time(), []
        for item in self.eval_items:
            out = await self.server.chat_completion(
                messages=[{"role": "user", "content": item["question"]}], n=1, temperature=0.0, max_tokens=64
            )
            verdict = await self.judge(item, out.choices[0].message.content or "")
            scores.append(verdict)
        await self.evaluate_log(
            metrics={
                "eval/accuracy": sum(scores) / len(scores),
                "eval/judge_failures": float(self.judge_failures),
            },
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    RawJudgeEnv.cli()
