"""Raw atroposlib BaseEnv, single-turn QA with string golds."""

from __future__ import annotations

import re
import time

from atroposlib.envs.base import BaseEnv, BaseEnvConfig, ScoredDataItem
from atroposlib.envs.server_handling.server_manager import APIServerConfig

DATA = [
    {"question": "What is the capital of France?", "answer": "Paris"},
    {"question": "Which planet is known as the red planet?", "answer": "Mars"},
    {"question": "What is the chemical symbol for gold?", "answer": "Au"},
    {"question": "Who wrote Hamlet?", "answer": "Shakespeare"},
    {"question": "What is the largest ocean?", "answer": "Pacific"},
    {"question": "What gas do plants absorb?", "answer": "Carbon dioxide"},
]


def norm(s):
    s = re.sub(r"[*_`#>\"'.,!?()\[\]]", " ", s.lower())
    return " ".join(s.split())


def grade(item, text):
    got, want = norm(text), norm(item["answer"])
    return 1.0 if want and (got == want or f" {want} " in f" {got} ") else 0.0


class RawQAEnv(BaseEnv):
    name = "s-rawqa"
    env_config_cls = BaseEnvConfig

    @classmethod
    def config_init(cls):
        return BaseEnvConfig(
            group_size=3, tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B", max_token_length=2048
        ), [
            APIServerConfig(
                base_url="http://localhost:9001/v1",
                model_name="m",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        self.test, self.train, self.k = DATA[:2], DATA[2:], 0

    async def get_next_item(self):
        self.k += 1
        return self.train[(self.k - 1) % len(self.train)]

    def encode(self, messages):
        full = self.tokenizer.apply_chat_template(messages, tokenize=False)
        head = self.tokenizer.apply_chat_template(messages[:-1], tokenize=False, add_generation_prompt=True)
        tokens = self.tokenizer.encode(full, add_special_tokens=False)
        cut = len(self.tokenizer.encode(head, add_special_tokens=False))
        return tokens, [-100] * cut + tokens[cut:]

    async def collect_trajectory(self, item):
        messages = [{"role": "user", "content": item["question"]}]
        out = await self.server.chat_completion(messages=messages, n=1, temperature=1.0, max_tokens=128)
        text = out.choices[0].message.content or ""
        messages.append({"role": "assistant", "content": text})
        tokens, masks = self.encode(messages)
        # A completion cut off by max_tokens never finished its answer: no credit (HC507).
        cut_off = out.choices[0].finish_reason == "length"
        return ScoredDataItem(
            tokens=tokens,
            masks=masks,
            scores=0.0 if cut_off else grade(item, text),
            messages=messages,
            advantages=None,
            ref_logprobs=None,
            group_overrides=None,
            overrides=None,
            images=None,
        ), []

    async def evaluate(self, *args, **kwargs):
        t0, got = time.time(), []
        for item in self.test:
            out = await self.server.chat_completion(
                messages=[{"role": "user", "content": item["question"]}], n=1, temperature=0.0, max_tokens=128
            )
            got.append(grade(item, out.choices[0].message.content or ""))
        await self.evaluate_log(
            metrics={"eval/acc": sum(got) / len(got)}, start_time=t0, end_time=time.time()
        )


if __name__ == "__main__":
    RawQAEnv.cli()
