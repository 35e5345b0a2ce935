"""Blind-corpus variant of unit_tests_env.py.

Write a function: the model saves ``solution.py``; the reward runs hidden unit tests on it in the sandbox.

The prompt describes one small function and shows two public examples. ``compute_reward`` writes a test runner
with the item's HIDDEN cases into the rollout's own sandbox (ToolContext), runs it with ``python3`` and reads the
runner's ``RESULT <nonce> k/n`` line: 1.0 when every hidden case passes, otherwise 0.8 * k/n, and 0 when the
module does not import or the run dies before reporting. The verdict never trusts the process: the exit status is
the solution's to choose (``sys.exit(0)`` at import), so only a result line carrying a nonce the runner reads from
stdin before importing the solution counts, and a result must have the reference's exact type to be equal (an
object whose ``__eq__`` always says True passes nothing).
"""

from __future__ import annotations

import json
import random
import re
import secrets
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

MODULE = "solution.py"
RUNNER = "_hidden_test.py"
SYSTEM_PROMPT = (
    "You are a Python developer with a terminal and file tools. Save your code where you are told, test it, "
    "then reply with one sentence."
)

_RUNNER_TEMPLATE = """\
import json
import sys


def main():
    nonce = sys.stdin.readline().strip()  # a local, read before the solution is imported
    sys.path.insert(0, ".")
    cases = json.loads({cases!r})
    try:
        from solution import {fn}
    except BaseException as exc:
        print("IMPORT ERROR:", type(exc).__name__, exc)
        return 2
    passed = 0
    for args, want in cases:
        try:
            got = {fn}(*args)
            passed += type(got) is type(want) and got == want
        except Exception:
            pass
    print(f"RESULT {{nonce}} {{passed}}/{{len(cases)}}")
    return 0 if passed == len(cases) else 1


sys.exit(main())
"""


def _item(fn: str, spec: str, reference: str, cases: list[tuple[list, object]]) -> dict:
    """One task: the first two cases are shown to the model, the remaining ones stay hidden."""
    return {
        "fn": fn,
        "spec": spec,
        "reference": reference,
        "public": [[list(a), w] for a, w in cases[:2]],
        "hidden": [[list(a), w] for a, w in cases[2:]],
    }


def _make_items() -> list[dict]:
    """Built-in data: four families of small functions, eight parameter settings each."""
    items = []
    for lo, hi in [(0, 10), (-5, 5), (1, 3), (10, 20), (-100, 0), (2, 9), (0, 1), (7, 70)]:
        xs = [lo - 3, hi + 4, lo, hi, (lo + hi) // 2, lo - 100, hi + 100, lo + 1]
        items.append(
            _item(
                "clamp",
                f"`clamp(x)` returns x limited to the closed range [{lo}, {hi}].",
                f"def clamp(x):\n    return max({lo}, min({hi}, x))\n",
                [([x], max(lo, min(hi, x))) for x in xs],
            )
        )
    for k in range(1, 9):
        lists = [[1, 2, 3], [4, 5, 6, 7, 8], [], [9], list(range(11)), [0, 0, 1], [5, 4, 3, 2, 1, 0], [2, 3]]
        items.append(
            _item(
                "rotate",
                f"`rotate(xs)` returns a new list: xs rotated LEFT by {k} positions (k modulo len(xs)); [] stays [].",
                f"def rotate(xs):\n    if not xs:\n        return []\n    k = {k} % len(xs)\n    return xs[k:] + xs[:k]\n",
                [([xs], (xs[k % len(xs) :] + xs[: k % len(xs)]) if xs else []) for xs in lists],
            )
        )
    for ch in "aeiotnrs":
        words = ["banana", "Strawberry", "", "AAAA", "Mississippi", "internationalization", "rhythm", "TeNoR"]
        items.append(
            _item(
                "count_char",
                f"`count_char(s)` returns how many times the letter {ch!r} occurs in s, ignoring case.",
                f"def count_char(s):\n    return s.lower().count({ch!r})\n",
                [([w], w.lower().count(ch)) for w in words],
            )
        )
    for a, b in [(3, 5), (2, 7), (4, 6), (3, 4), (5, 7), (2, 3), (6, 9), (7, 11)]:
        ns = [a * b, a, b, 1, a * b * 2, a * 3, b * 5, a * b + 1]

        def label(n: int, a: int = a, b: int = b) -> str:
            return (
                "FizzBuzz"
                if n % a == 0 and n % b == 0
                else "Fizz"
                if n % a == 0
                else "Buzz"
                if n % b == 0
                else str(n)
            )

        items.append(
            _item(
                "fizz",
                f"`fizz(n)` returns 'FizzBuzz' if n is divisible by both {a} and {b}, 'Fizz' if only by {a}, "
                f"'Buzz' if only by {b}, otherwise str(n).",
                f"def fizz(n):\n    if n % {a} == 0 and n % {b} == 0:\n        return 'FizzBuzz'\n"
                f"    if n % {a} == 0:\n        return 'Fizz'\n    if n % {b} == 0:\n        return 'Buzz'\n"
                "    return str(n)\n",
                [([n], label(n)) for n in ns],
            )
        )
    return items


def runner_source(item: dict) -> str:
    """The hidden test runner for an item (what the reward writes into the rollout's sandbox)."""
    return _RUNNER_TEMPLATE.format(cases=json.dumps(item["hidden"]), fn=item["fn"])


class UnitTestsEnv(HermesAgentBaseEnv):
    """Code tasks graded by hidden tests run in the rollout's own sandbox, with partial credit."""

    name = "unit-tests"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=10,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=30,
            group_size=4,
            total_steps=300,
            steps_per_eval=50,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="unit-tests",
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
        random.Random(17).shuffle(items)
        self._eval_items = items[:8]
        self._items = items[8:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        examples = "\n".join(
            f"    {item['fn']}({', '.join(map(repr, a))}) == {w!r}" for a, w in item["public"]
        )
        return (
            f"Write a Python module `{MODULE}` in your working directory that defines {item['spec']}\n\n"
            f"Examples:\n{examples}\n\nIt will be checked against further cases you do not see."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        with open(RUNNER, "w") as fh:
            fh.write(runner_source(item))
        await ctx.aupload_file(RUNNER, RUNNER)
        nonce = secrets.token_hex(8)
        run = await ctx.aterminal(f"echo {nonce} | python3 {RUNNER}", timeout=20)
        found = re.findall(rf"^RESULT {nonce} (\d+)/(\d+)$", run["output"], re.MULTILINE)
        if not found:  # import error, crash, timeout or a faked report: nothing was verified
            return 0.0
        passed, total = map(int, found[-1])
        return 1.0 if passed == total else 0.8 * passed / max(1, total)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores, samples = [], []
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
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"fn": item["fn"], "spec": item["spec"], "score": score})
        metrics = {
            "eval/pass_rate": sum(s == 1.0 for s in scores) / max(1, len(scores)),
            "eval/mean_score": sum(scores) / max(1, len(scores)),
        }
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(
            metrics=metrics,
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_turns": self.config.max_agent_turns},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    UnitTestsEnv.cli()
