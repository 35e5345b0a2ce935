"""Write a small Python function: the agent saves ``solution.py``; the reward runs hidden test cases against it.

Modelled on NousResearch/hermes-agent environments/hermes_swe_env/hermes_swe_env.py (the reward runs tests in the
rollout's sandbox through ToolContext). The prompt shows two examples per function; the reward runs other, hidden
cases, one fresh ``python3`` per case, and compares the returned value here, in the env, with the expected one. The
score is the share of hidden cases passed.
"""

from __future__ import annotations

import json
import shlex
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SOLUTION_FILE = "solution.py"
CASE_TIMEOUT = 10  # seconds per hidden case; a solution that hangs fails that case
RESULT_MARK = "__hidden_case_result__:"
SYSTEM_PROMPT = (
    "You are a Python developer with a terminal and file tools in a private working directory. Write the requested "
    "function, test it on the examples, save it, then reply with one sentence."
)


def _task(fn: str, signature: str, spec: str, examples: list, hidden: list, reference: str) -> dict:
    return {
        "fn": fn,
        "signature": signature,
        "spec": spec,
        "examples": [{"args": a, "expected": e} for a, e in examples],
        "hidden": [{"args": a, "expected": e} for a, e in hidden],
        "reference": reference,
    }


TASKS = [
    _task(
        "is_palindrome",
        "is_palindrome(s: str) -> bool",
        "True when s reads the same both ways, ignoring case and every character that is not a letter or digit.",
        [(["Racecar"], True), (["abc"], False)],
        [(["A man, a plan, a canal: Panama"], True), ([""], True), (["ab1ba!"], True), (["ab"], False)],
        "def is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n",
    ),
    _task(
        "count_vowels",
        "count_vowels(s: str) -> int",
        "The number of vowels (a, e, i, o, u, either case) in s.",
        [(["hello"], 2), (["xyz"], 0)],
        [(["AEIOU"], 5), ([""], 0), (["Programming"], 3), (["queueing"], 5)],
        "def count_vowels(s):\n    return sum(c in 'aeiouAEIOU' for c in s)\n",
    ),
    _task(
        "second_largest",
        "second_largest(nums: list[int]) -> int | None",
        "The second largest DISTINCT value of nums, or None when there are fewer than two distinct values.",
        [([[3, 1, 2]], 2), ([[5]], None)],
        [([[4, 4, 4]], None), ([[1, 9, 9, 7]], 7), ([[-1, -5, -3]], -3), ([[]], None)],
        "def second_largest(nums):\n    d = sorted(set(nums))\n    return d[-2] if len(d) > 1 else None\n",
    ),
    _task(
        "run_length",
        "run_length(s: str) -> str",
        "Run-length encoding: each run of one character becomes the character then the run's length.",
        [(["aaab"], "a3b1"), (["x"], "x1")],
        [([""], ""), (["aabbaa"], "a2b2a2"), (["zzzzzzzzzzzz"], "z12"), (["abc"], "a1b1c1")],
        "def run_length(s):\n    out, i = [], 0\n    while i < len(s):\n        j = i\n"
        "        while j < len(s) and s[j] == s[i]:\n            j += 1\n        out.append(f'{s[i]}{j - i}')\n"
        "        i = j\n    return ''.join(out)\n",
    ),
    _task(
        "flatten",
        "flatten(items: list) -> list",
        "The values of a list nested to any depth, in order, as one flat list.",
        [([[1, [2, 3]]], [1, 2, 3]), ([[]], [])],
        [
            ([[[[[]]]]], []),
            ([[1, [2, [3, [4]]], 5]], [1, 2, 3, 4, 5]),
            ([[["a"], "b"]], ["a", "b"]),
            ([[0]], [0]),
        ],
        "def flatten(items):\n    out = []\n    for x in items:\n"
        "        out.extend(flatten(x) if isinstance(x, list) else [x])\n    return out\n",
    ),
    _task(
        "merge_intervals",
        "merge_intervals(intervals: list[list[int]]) -> list[list[int]]",
        "Merge overlapping or touching closed intervals; return them sorted by start.",
        [([[[1, 3], [2, 4]]], [[1, 4]]), ([[[5, 6]]], [[5, 6]])],
        [
            ([[[8, 9], [1, 2]]], [[1, 2], [8, 9]]),
            ([[[1, 2], [2, 3]]], [[1, 3]]),
            ([[]], []),
            ([[[1, 10], [2, 3], [4, 5]]], [[1, 10]]),
        ],
        "def merge_intervals(intervals):\n    out = []\n    for a, b in sorted(intervals):\n"
        "        if out and a <= out[-1][1]:\n            out[-1][1] = max(out[-1][1], b)\n"
        "        else:\n            out.append([a, b])\n    return out\n",
    ),
    _task(
        "to_roman",
        "to_roman(n: int) -> str",
        "The Roman numeral of n, for 1 <= n <= 3999.",
        [([3], "III"), ([9], "IX")],
        [([1994], "MCMXCIV"), ([40], "XL"), ([3999], "MMMCMXCIX"), ([444], "CDXLIV")],
        "def to_roman(n):\n    vals = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'),\n"
        "            (50, 'L'), (40, 'XL'), (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]\n"
        "    out = ''\n    for v, s in vals:\n        while n >= v:\n            out += s\n            n -= v\n"
        "    return out\n",
    ),
    _task(
        "digital_root",
        "digital_root(n: int) -> int",
        "Sum the decimal digits of n >= 0 again and again until one digit is left; return it.",
        [([38], 2), ([5], 5)],
        [([0], 0), ([999999999], 9), ([123456], 3), ([10], 1)],
        "def digital_root(n):\n    while n >= 10:\n        n = sum(int(d) for d in str(n))\n    return n\n",
    ),
    _task(
        "chunk",
        "chunk(items: list, k: int) -> list[list]",
        "Split items into consecutive lists of k items; the last one may be shorter.",
        [([[1, 2, 3, 4, 5], 2], [[1, 2], [3, 4], [5]]), ([[], 3], [])],
        [
            ([[1, 2, 3], 3], [[1, 2, 3]]),
            ([[1, 2, 3], 5], [[1, 2, 3]]),
            ([["a", "b"], 1], [["a"], ["b"]]),
            ([[0, 0, 0, 0], 2], [[0, 0], [0, 0]]),
        ],
        "def chunk(items, k):\n    return [items[i:i + k] for i in range(0, len(items), k)]\n",
    ),
    _task(
        "camel_to_snake",
        "camel_to_snake(name: str) -> str",
        "Convert a camelCase or PascalCase name to snake_case (lower case, an underscore before each inner capital).",
        [(["helloWorld"], "hello_world"), (["x"], "x")],
        [(["HTTPServer"], "h_t_t_p_server"), (["CamelCase"], "camel_case"), (["aB"], "a_b"), ([""], "")],
        "def camel_to_snake(name):\n    out = []\n    for i, c in enumerate(name):\n"
        "        if c.isupper() and i:\n            out.append('_')\n        out.append(c.lower())\n"
        "    return ''.join(out)\n",
    ),
    _task(
        "rotate_right",
        "rotate_right(items: list, k: int) -> list",
        "items rotated k places to the right (k may exceed the length; an empty list stays empty).",
        [([[1, 2, 3], 1], [3, 1, 2]), ([[], 4], [])],
        [
            ([[1, 2, 3], 3], [1, 2, 3]),
            ([[1, 2, 3], 5], [2, 3, 1]),
            ([[1], 100], [1]),
            ([[1, 2, 3, 4], 0], [1, 2, 3, 4]),
        ],
        "def rotate_right(items, k):\n    if not items:\n        return []\n    k %= len(items)\n"
        "    return items[-k:] + items[:-k] if k else list(items)\n",
    ),
    _task(
        "word_lengths",
        "word_lengths(text: str) -> dict[str, int]",
        "Map each distinct word of text (split on whitespace, lower-cased) to its length.",
        [(["Hi there"], {"hi": 2, "there": 5}), ([""], {})],
        [
            (["a A a"], {"a": 1}),
            (["  spaced   out  "], {"spaced": 6, "out": 3}),
            (["One two THREE"], {"one": 3, "two": 3, "three": 5}),
            (["x\ty\nz"], {"x": 1, "y": 1, "z": 1}),
        ],
        "def word_lengths(text):\n    return {w.lower(): len(w) for w in text.split()}\n",
    ),
]


class HiddenTestsEnv(HermesAgentBaseEnv):
    """Function writing graded by hidden cases run in the rollout's sandbox; values compared env-side."""

    name = "hidden-tests"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=10,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=30,
            group_size=8,
            total_steps=300,
            steps_per_eval=50,
            max_token_length=8192,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="hidden-tests",
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
        # Whole functions are held out for eval: no eval function is ever trained on.
        self.train_items = TASKS[:9]
        self.eval_items = TASKS[9:]
        self.iter = 0
        self.reward_buffer: list[float] = []
        self._eval_metrics: dict[str, float] = {}

    async def get_next_item(self) -> dict:
        item = self.train_items[self.iter % len(self.train_items)]
        self.iter += 1
        return item

    def format_prompt(self, item: dict) -> str:
        examples = "\n".join(
            f"    {item['fn']}({', '.join(repr(a) for a in ex['args'])}) == {ex['expected']!r}"
            for ex in item["examples"]
        )
        return (
            f"Write `{item['signature']}` in Python.\n\n{item['spec']}\n\nExamples:\n{examples}\n\n"
            f"Save it as `{SOLUTION_FILE}` in your working directory; it will be checked on other inputs too."
        )

    async def _run_case(self, item: dict, case: dict, ctx: ToolContext) -> bool:
        """Run one case in a fresh interpreter in the sandbox; the returned value is compared here, not there."""
        code = (
            "import json, sys\n"
            "sys.path.insert(0, '.')\n"
            f"from solution import {item['fn']}\n"
            f"args = json.loads({json.dumps(case['args'])!r})\n"
            f"print({RESULT_MARK!r} + json.dumps({item['fn']}(*args)))\n"
        )
        out = await ctx.aterminal(f"python3 -c {shlex.quote(code)}", timeout=CASE_TIMEOUT)
        if out["exit_code"] != 0:
            return False
        lines = [ln for ln in out["output"].splitlines() if ln.startswith(RESULT_MARK)]
        if not lines:
            return False
        try:
            value = json.loads(lines[-1][len(RESULT_MARK) :])
        except json.JSONDecodeError:
            return False
        return value == case["expected"] and type(value) is type(case["expected"])

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        exists = await ctx.aterminal(f"test -f {SOLUTION_FILE}", timeout=10)
        if exists["exit_code"] != 0:
            score = 0.0
        else:
            passed = [await self._run_case(item, case, ctx) for case in item["hidden"]]
            score = sum(passed) / len(passed)
        self.reward_buffer.append(score)
        return score

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        total, solved, samples = 0.0, 0, []
        train_rewards = list(self.reward_buffer)
        for item in self.eval_items:
            task_id = f"eval-{item['fn']}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            score = await self.score_rollout(item, result, task_id)
            total += score
            solved += score == 1.0
            samples.append({"fn": item["fn"], "score": score, "turns": result.turns_used})
        self.reward_buffer = train_rewards  # eval scores are not training rewards
        n = max(1, len(self.eval_items))
        self._eval_metrics = {"eval/pass_rate": total / n, "eval/solved_rate": solved / n}
        await self.evaluate_log(
            metrics=self._eval_metrics,
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_turns": self.config.max_agent_turns},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = {**(wandb_metrics or {}), **self._eval_metrics}
        self._eval_metrics = {}
        if self.reward_buffer:
            wandb_metrics["train/avg_reward"] = sum(self.reward_buffer) / len(self.reward_buffer)
            wandb_metrics["train/solved_rate"] = sum(r == 1.0 for r in self.reward_buffer) / len(
                self.reward_buffer
            )
            self.reward_buffer = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    HiddenTestsEnv.cli()
