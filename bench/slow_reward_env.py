"""A coding env whose reward is slow, for timing ``hermes-envs check`` (bench/check.py, issue 26).

The agent saves ``solution.py`` in its sandbox; ``compute_reward`` writes ``test_solution.py`` (hidden tests that
import the saved file) and runs ``python3 test_solution.py`` in the same sandbox, as test-running envs do (one
interpreter start and a unittest run per reward call, ~0.1-0.3 s). A final answer holding a fenced Python block
counts as the saved file too, so a text-only transcript can earn reward.

    python bench/check.py bench/slow_reward_env.py     # check vs this env's own `process` run
"""

from __future__ import annotations

import json
import re
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import HermesAgentBaseEnv, HermesAgentEnvConfig

TASKS = [
    {
        "task_id": "clamp",
        "spec": "clamp(x, lo, hi) returns x limited to the range [lo, hi]",
        "solution": "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n",
        "tests": [("clamp(5, 0, 3)", "3"), ("clamp(-2, 0, 3)", "0"), ("clamp(2, 0, 3)", "2")],
    },
    {
        "task_id": "dedupe",
        "spec": "dedupe(xs) returns xs without repeats, keeping the first occurrence of each",
        "solution": "def dedupe(xs):\n    seen = []\n    for x in xs:\n        if x not in seen:\n"
        "            seen.append(x)\n    return seen\n",
        "tests": [("dedupe([3, 1, 3, 2, 1])", "[3, 1, 2]"), ("dedupe([])", "[]")],
    },
    {
        "task_id": "words",
        "spec": "words(s) returns the number of whitespace-separated words in s",
        "solution": "def words(s):\n    return len(s.split())\n",
        "tests": [("words('a b  c')", "3"), ("words('')", "0")],
    },
    {
        "task_id": "digits",
        "spec": "digits(n) returns the sum of the decimal digits of the non-negative int n",
        "solution": "def digits(n):\n    return sum(int(c) for c in str(n))\n",
        "tests": [("digits(1234)", "10"), ("digits(0)", "0")],
    },
    {
        "task_id": "pairs",
        "spec": "pairs(xs) returns the list of adjacent pairs of xs as tuples",
        "solution": "def pairs(xs):\n    return list(zip(xs, xs[1:]))\n",
        "tests": [("pairs([1, 2, 3])", "[(1, 2), (2, 3)]"), ("pairs([1])", "[]")],
    },
]

_FENCE = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)


def _test_file(task: dict[str, Any]) -> str:
    """The hidden tests of one task as a unittest module that imports solution.py."""
    lines = ["import unittest", "from solution import *", "", "", "class Hidden(unittest.TestCase):"]
    for n, (call, expected) in enumerate(task["tests"]):
        lines += [f"    def test_{n}(self):", f"        self.assertEqual({call}, {expected})", ""]
    lines += ["", "if __name__ == '__main__':", "    unittest.main()"]
    return "\n".join(lines) + "\n"


def _all_ran(output: str, item: dict[str, Any]) -> bool:
    """Whether unittest reports as many distinct tests run as the task has (a set of names, as graders keep)."""
    names = {f"test_{n}" for n in range(len(item["tests"]))}
    ran = re.search(r"Ran (\d+) test", output)
    return ran is not None and int(ran.group(1)) == len(names)


class SlowRewardEnv(HermesAgentBaseEnv):
    name = "slow-reward"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=4,
            group_size=2,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:9001/v1",
                model_name="m",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        self.train, self.test = TASKS[:4], TASKS[4:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return (
            f"Write solution.py in the working directory defining {item['spec']}. Hidden tests import it. "
            "Reply 'done' when it is saved."
        )

    def conformance_transcripts(self, item):
        """A rollout that saves the reference solution, and one that saves a stub (the kit's HC407 and on)."""
        good = {"name": "write_file", "arguments": {"path": "solution.py", "content": item["solution"]}}
        stub = {"name": "write_file", "arguments": {"path": "solution.py", "content": "pass\n"}}
        return {
            "good": [[{"content": "", "tool_calls": [good]}, {"content": "done"}]],
            "bad": [[{"content": "", "tool_calls": [stub]}, {"content": "done"}]],
        }

    async def compute_reward(self, item, result, ctx):
        try:
            await ctx.aread_file("solution.py")
        except OSError:
            final = result.messages[-1].get("content") if result.messages else ""
            block = _FENCE.search(final or "")
            if block is None:
                return 0.0
            await ctx.awrite_file("solution.py", block.group(1))
        await ctx.awrite_file("test_solution.py", _test_file(item))
        run = await ctx.aterminal("python3 test_solution.py", timeout=60)
        return 1.0 if run.get("exit_code") == 0 and _all_ran(run.get("output") or "", item) else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/pass_rate")


def policy(body: dict[str, Any]) -> dict[str, Any]:
    """A fake model that solves the task: save the reference solution, then say done (bench/check.py)."""
    messages = body.get("messages") or []
    prompt = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    task = next((t for t in TASKS if t["spec"] in str(prompt)), None)
    if task is None:
        return {"content": "done"}
    if not any(m.get("role") == "tool" for m in messages):
        call = {"name": "write_file", "arguments": {"path": "solution.py", "content": task["solution"]}}
        return {"tool_calls": [call]}
    return {"content": "done " + json.dumps(task["task_id"])}


if __name__ == "__main__":
    SlowRewardEnv.cli()
