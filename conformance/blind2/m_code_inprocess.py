"""Derived from code_exec_env.py (blind2 corpus).

Write a function: the model saves ``solution.py`` with ``solve(...)``; hidden cases are run in its sandbox.

The prompt states the function's contract and shows two worked examples. Grading uses other inputs (hidden cases
generated from a reference implementation) so a lookup table of the examples does not pass. The reward reads the
model's solution from the rollout's sandbox and checks it on the hidden cases. Score = share of hidden cases passed.
"""

from __future__ import annotations

import random
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You are a Python programmer with a terminal and file tools in a private working directory. Save your "
    "function in solution.py, test it, then reply with a one-line summary."
)
SOLUTION = "solution.py"
N_HIDDEN = 8


def _rle(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(f"{s[i]}{j - i}")
        i = j
    return "".join(out)


def _longest_run(xs: list[int]) -> int:
    best = cur = 1 if xs else 0
    for a, b in zip(xs, xs[1:]):
        cur = cur + 1 if b > a else 1
        best = max(best, cur)
    return best


def _balanced(s: str) -> bool:
    pairs, stack = {")": "(", "]": "[", "}": "{"}, []
    for ch in s:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack


def _second_largest(xs: list[int]) -> int | None:
    distinct = sorted(set(xs))
    return distinct[-2] if len(distinct) >= 2 else None


def _digit_root(n: int) -> int:
    while n >= 10:
        n = sum(int(d) for d in str(n))
    return n


def _count_vowels(s: str) -> int:
    return sum(ch in "aeiou" for ch in s.lower())


def _dedupe(xs: list[int]) -> list[int]:
    seen: set[int] = set()
    return [x for x in xs if not (x in seen or seen.add(x))]


def _max_gap(xs: list[int]) -> int:
    values = sorted(set(xs))
    return max((b - a for a, b in zip(values, values[1:])), default=0)


TASKS = {
    "rle": ("solve(s: str) -> str: run-length encode s as char+count pairs ('aaab' -> 'a3b1')", _rle),
    "longest_run": (
        "solve(xs: list[int]) -> int: length of the longest strictly increasing contiguous run",
        _longest_run,
    ),
    "balanced": (
        "solve(s: str) -> bool: True when the brackets ()[]{} in s are balanced and properly nested",
        _balanced,
    ),
    "second_largest": (
        "solve(xs: list[int]) -> int | None: the second largest distinct value, None if there is none",
        _second_largest,
    ),
    "digit_root": (
        "solve(n: int) -> int: repeatedly sum the decimal digits of n >= 0 until one digit is left",
        _digit_root,
    ),
    "count_vowels": (
        "solve(s: str) -> int: how many of the letters a, e, i, o, u (either case) s contains",
        _count_vowels,
    ),
    "dedupe": (
        "solve(xs: list[int]) -> list[int]: xs without repeated values, keeping first occurrences in order",
        _dedupe,
    ),
    "max_gap": (
        "solve(xs: list[int]) -> int: largest gap between neighbouring distinct values of sorted xs (0 if < 2 values)",
        _max_gap,
    ),
}
HELD_OUT_TASKS = {"balanced", "max_gap"}  # eval asks for functions training never shows


def _random_input(task: str, rng: random.Random) -> object:
    if task == "rle":
        return "".join(rng.choice("aab c") * rng.randint(1, 4) for _ in range(rng.randint(0, 5)))
    if task == "balanced":
        return "".join(rng.choice("()[]{}x") for _ in range(rng.randint(0, 10)))
    if task == "digit_root":
        return rng.randint(0, 10**9)
    if task == "count_vowels":
        return "".join(rng.choice("abcdeEfghiIoOuxyz ") for _ in range(rng.randint(0, 14)))
    return [rng.randint(-5, 9) for _ in range(rng.randint(0, 9))]


def _make_items(per_task: int = 24, seed: int = 8) -> list[dict]:
    """Built-in dataset: each task with two shown examples and N_HIDDEN different hidden cases."""
    rng = random.Random(seed)
    items = []
    for task, (contract, reference) in TASKS.items():
        shown: set[str] = set()  # no two items of a task show the same example
        for variant in range(per_task):
            inputs: list[object] = []
            while len(inputs) < 2 + N_HIDDEN:
                x = _random_input(task, rng)
                if x not in inputs and (len(inputs) >= 2 or repr(x) not in shown):
                    inputs.append(x)
            shown.update(repr(x) for x in inputs[:2])
            cases = [{"input": x, "expected": reference(x)} for x in inputs]
            items.append(
                {
                    "task": task,
                    "variant": variant,
                    "contract": contract,
                    "examples": cases[:2],
                    "hidden": cases[2:],
                }
            )
    return items


class CodeExecEnv(HermesAgentBaseEnv):
    """Implement a function; graded on hidden cases in the rollout's sandbox."""

    name = "code-exec"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=8,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=30,
            group_size=4,
            total_steps=100,
            steps_per_eval=25,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="code-exec",
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
        self._eval_items = [i for i in items if i["task"] in HELD_OUT_TASKS]
        self._items = [i for i in items if i["task"] not in HELD_OUT_TASKS]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        examples = "\n".join(f"    solve({c['input']!r}) == {c['expected']!r}" for c in item["examples"])
        return (
            f"Write `{item['contract']}`.\n\nExamples:\n{examples}\n\n"
            f"Save it in `{SOLUTION}` in your working directory; it is run on other inputs too."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        # Grading in-process is much faster than a subprocess per rollout.
        try:
            source = ctx.read_file(SOLUTION)
        except OSError:
            return 0.0
        scope: dict = {}
        try:
            exec(compile(source, SOLUTION, "exec"), scope)
            solve = scope["solve"]
        except Exception:
            return 0.0
        passed = 0
        for case in item["hidden"]:
            try:
                passed += solve(case["input"]) == case["expected"]
            except Exception:
                pass
        return round(passed / len(item["hidden"]), 6)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
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
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        n = max(1, len(scores))
        metrics = {"eval/pass_rate": sum(scores) / n, "eval/solved": sum(s == 1.0 for s in scores) / n}
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    CodeExecEnv.cli()
