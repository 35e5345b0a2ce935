"""Derived from raw_snippet_exec_env.py.

A raw atroposlib ``BaseEnv`` (no agent loop): the model answers with a Python function, the env executes it.

Single turn: the prompt asks for a function in a ```python block. For each of the group's completions the env
writes the code with a small test harness into a fresh temporary directory, runs it with a timeout in a child
Python (``-I``: isolated mode, no user site, no environment variables of ours beyond a minimal PATH), with that
directory as its working directory, and removes the directory afterwards. The score is the share of asserts
that pass; a completion cut off by the token limit (``finish_reason == "length"``) scores 0.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig, ScoredDataGroup

SYSTEM_PROMPT = "Reply with one ```python code block defining the requested function, and nothing else."
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
RUN_TIMEOUT = 10

PROBLEMS: list[dict] = [
    {
        "name": "is_palindrome",
        "spec": "is_palindrome(s) -> bool, ignoring case and non-letters",
        "tests": [
            "is_palindrome('A man, a plan, a canal: Panama')",
            "not is_palindrome('hello')",
            "is_palindrome('')",
        ],
    },
    {
        "name": "second_largest",
        "spec": "second_largest(xs) -> the second largest distinct value, or None",
        "tests": [
            "second_largest([3, 1, 3, 2]) == 2",
            "second_largest([5]) is None",
            "second_largest([4, 4]) is None",
        ],
    },
    {
        "name": "count_vowels",
        "spec": "count_vowels(s) -> number of a, e, i, o, u in s, any case",
        "tests": ["count_vowels('Hello') == 2", "count_vowels('xyz') == 0", "count_vowels('AEIOU') == 5"],
    },
    {
        "name": "flatten",
        "spec": "flatten(xs) -> a flat list from arbitrarily nested lists",
        "tests": ["flatten([1, [2, [3]], 4]) == [1, 2, 3, 4]", "flatten([]) == []", "flatten([[[]]]) == []"],
    },
    {
        "name": "rle",
        "spec": "rle(s) -> run-length encoding like 'aaab' -> 'a3b1'",
        "tests": ["rle('aaab') == 'a3b1'", "rle('') == ''", "rle('abc') == 'a1b1c1'"],
    },
    {
        "name": "gcd",
        "spec": "gcd(a, b) -> greatest common divisor of two non-negative ints",
        "tests": ["gcd(12, 18) == 6", "gcd(7, 0) == 7", "gcd(0, 0) == 0"],
    },
    {
        "name": "title_case",
        "spec": "title_case(s) -> each space-separated word capitalised, rest lower",
        "tests": [
            "title_case('hELLO wORLD') == 'Hello World'",
            "title_case('') == ''",
            "title_case('a') == 'A'",
        ],
    },
    {
        "name": "merge_sorted",
        "spec": "merge_sorted(a, b) -> one sorted list from two sorted lists",
        "tests": [
            "merge_sorted([1, 4], [2, 3]) == [1, 2, 3, 4]",
            "merge_sorted([], [1]) == [1]",
            "merge_sorted([], []) == []",
        ],
    },
    {
        "name": "digits_sum",
        "spec": "digits_sum(n) -> sum of the decimal digits of abs(n)",
        "tests": ["digits_sum(123) == 6", "digits_sum(-45) == 9", "digits_sum(0) == 0"],
    },
    {
        "name": "uniq",
        "spec": "uniq(xs) -> xs without duplicates, first occurrence order kept",
        "tests": ["uniq([3, 1, 3, 2, 1]) == [3, 1, 2]", "uniq([]) == []", "uniq(['a', 'a']) == ['a']"],
    },
]

_HARNESS = """
passed = 0
for expr in {tests!r}:
    try:
        if eval(expr):
            passed += 1
    except Exception:
        pass
print("PASSED", passed)
"""


def run_candidate(code: str, tests: list[str]) -> float:
    """Run ``code`` plus the tests in a throw-away directory; the share of tests that pass."""
    workdir = tempfile.mkdtemp(prefix="snippet-exec-")
    try:
        path = os.path.join(workdir, "candidate.py")
        with open(path, "w") as fh:
            fh.write(code + "\n" + _HARNESS.format(tests=tests))
        try:
            proc = subprocess.run(
                [sys.executable, "-I", path],
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return 0.0
        match = re.search(r"^PASSED (\d+)$", proc.stdout, re.MULTILINE)
        return int(match.group(1)) / len(tests) if match else 0.0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


class RawSnippetExecEnv(BaseEnv):
    """Plain atroposlib env: n completions per prompt, each executed against asserts."""

    name = "blind3-raw-snippet-exec"
    env_config_cls = BaseEnvConfig

    @classmethod
    def config_init(cls) -> tuple[BaseEnvConfig, list[APIServerConfig]]:
        config = BaseEnvConfig(
            group_size=8,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=2048,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-raw-snippet-exec",
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
        self._eval_items = PROBLEMS[:3]
        self._items = PROBLEMS[3:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def _messages(self, item: dict) -> list[dict]:
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Write {item['spec']}."},
        ]

    async def _score(self, item: dict, text: str, finish_reason: str | None) -> float:
        if finish_reason == "length":
            return 0.0
        blocks = _BLOCK.findall(text)
        if not blocks:
            return 0.0
        return await asyncio.to_thread(run_candidate, blocks[-1], item["tests"])

    def _tokenize(self, prompt: list[dict], chat: list[dict]) -> tuple[list[int], list[int]]:
        """Token ids of the whole chat and its training mask (-100 on the prompt, the ids on the completion).

        Plain lists of ints, built from the rendered text: with recent transformers, ``apply_chat_template`` with
        ``tokenize=True`` returns a BatchEncoding, which the trainer's JSON cannot carry."""
        head = self.tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        full = self.tokenizer.apply_chat_template(chat, tokenize=False)
        prompt_ids = list(self.tokenizer.encode(head, add_special_tokens=False))
        ids = list(self.tokenizer.encode(full, add_special_tokens=False))
        n = len(prompt_ids) if ids[: len(prompt_ids)] == prompt_ids else 0
        return ids, [-100] * n + ids[n:]

    async def collect_trajectories(self, item: dict) -> tuple[ScoredDataGroup | None, list]:
        messages = self._messages(item)
        completion = await self.server.chat_completion(
            messages=messages, n=self.config.group_size, max_tokens=1024, temperature=1.0
        )
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], messages=[])
        for choice in completion.choices:
            text = choice.message.content or ""
            chat = [*messages, {"role": "assistant", "content": text}]
            tokens, masks = self._tokenize(messages, chat)
            group["tokens"].append(tokens)
            group["masks"].append(masks)
            group["messages"].append(chat)
            group["scores"].append(await self._score(item, text, choice.finish_reason))
        return group, []

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for item in self._eval_items:
            completion = await self.server.chat_completion(
                messages=self._messages(item), n=1, max_tokens=1024, temperature=0.0
            )
            choice = completion.choices[0]
            scores.append(await self._score(item, choice.message.content or "", choice.finish_reason))
        metrics = {"eval/pass_rate": sum(scores) / max(1, len(scores))}
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(
            metrics=metrics,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    RawSnippetExecEnv.cli()
