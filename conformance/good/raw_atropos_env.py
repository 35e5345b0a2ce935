"""Directly on atroposlib's BaseEnv (no agent contract): single-turn arithmetic, tokenized with the chat
template (prompt masked with -100). Agent-only checks say "not applicable" here.
"""

from __future__ import annotations

import re
import time

from atroposlib.envs.base import BaseEnv, BaseEnvConfig, ScoredDataItem
from atroposlib.envs.server_handling.server_manager import APIServerConfig

#: Like many upstream envs it scores a completion cut off by max_tokens like a finished one (HC507 warns).
EXPECTED_WARNINGS = ["HC507"]

PAIRS = [(a, b) for a in (12, 17, 23, 31, 44, 58) for b in (3, 7, 9)]


class RawSumEnv(BaseEnv):
    """Add two numbers; 1.0 for the exact sum as the last number of the reply."""

    name = "raw-sum"
    env_config_cls = BaseEnvConfig

    @classmethod
    def config_init(cls) -> tuple[BaseEnvConfig, list[APIServerConfig]]:
        config = BaseEnvConfig(
            group_size=4, tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B", max_token_length=1024
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
        items = [{"a": a, "b": b, "answer": str(a + b)} for a, b in PAIRS]
        self.eval_items, self.train_items = items[:4], items[4:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    @staticmethod
    def prompt(item: dict) -> str:
        return f"What is {item['a']} plus {item['b']}? Reply with the number."

    @staticmethod
    def score(item: dict, text: str) -> float:
        numbers = re.findall(r"-?\d+", text or "")
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0

    def tokenize(self, messages: list[dict]) -> tuple[list[int], list[int]]:
        """Tokens of the whole chat; masks -100 on the prompt (and the assistant header), token ids after it."""
        full = self.tokenizer.apply_chat_template(messages, tokenize=False)
        prompt = self.tokenizer.apply_chat_template(messages[:-1], tokenize=False, add_generation_prompt=True)
        tokens = self.tokenizer.encode(full, add_special_tokens=False)
        cut = len(self.tokenizer.encode(prompt, add_special_tokens=False))
        return tokens, [-100] * cut + tokens[cut:]

    async def collect_trajectory(self, item: dict) -> tuple[ScoredDataItem | None, list]:
        messages = [{"role": "user", "content": self.prompt(item)}]
        completion = await self.server.chat_completion(messages=messages, n=1, temperature=1.0, max_tokens=64)
        reply = completion.choices[0].message.content or ""
        messages.append({"role": "assistant", "content": reply})
        tokens, masks = self.tokenize(messages)
        return ScoredDataItem(
            tokens=tokens,
            masks=masks,
            scores=self.score(item, reply),
            messages=messages,
            advantages=None,
            ref_logprobs=None,
            group_overrides=None,
            overrides=None,
            images=None,
        ), []

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for item in self.eval_items:
            completion = await self.server.chat_completion(
                messages=[{"role": "user", "content": self.prompt(item)}], n=1, temperature=0.0, max_tokens=64
            )
            scores.append(self.score(item, completion.choices[0].message.content or ""))
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / len(scores)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    RawSumEnv.cli()
