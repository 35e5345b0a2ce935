"""Implement a small function in ``solution.py``; the reward runs hidden tests against the saved file.

The agent gets a specification and a sandbox with a terminal and file tools. It must leave ``solution.py`` in its
working directory. The hidden cases never appear in the prompt: after the rollout, ``compute_reward`` writes a
checker next to the agent's file (in the rollout's own sandbox), runs it, and credits the share of cases that
passed (each reported with a per-run nonce the agent's code cannot know). A file that does not import, hangs or crashes passes nothing.

Families of tasks come in several parameter variants; the eval split holds out whole families, so eval measures
a task the policy has not trained on rather than a new constant in a familiar one.
"""

from __future__ import annotations

import json
import random
import secrets
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You are a Python developer working in a private directory with a terminal and file tools. "
    "Implement what is asked in solution.py, test it yourself, then reply with a one-line summary."
)
CHECKER = "_hidden_check_7f3a.py"

# The checker: one line per case, "<nonce> PASS <i>" or "<nonce> FAIL <i>"; an exception inside a case is a FAIL
# for that case. The nonce comes on stdin and is read into a local before the agent's module is imported, so code
# in solution.py cannot print passing lines of its own.
_CHECKER_SOURCE = """
import json, sys


def main():
    nonce = sys.stdin.readline().strip()
    with open(sys.argv[1]) as fh:
        cases = json.load(fh)
    from solution import solve

    for i, (args, want) in enumerate(cases):
        try:
            ok = solve(*args) == want
        except Exception:
            ok = False
        print(nonce, "PASS" if ok else "FAIL", i, flush=True)


main()
"""
CASES_FILE = "_hidden_cases_7f3a.json"


def _caesar(text: str, k: int) -> str:
    out = []
    for ch in text:
        if ch.islower():
            out.append(chr((ord(ch) - 97 + k) % 26 + 97))
        elif ch.isupper():
            out.append(chr((ord(ch) - 65 + k) % 26 + 65))
        else:
            out.append(ch)
    return "".join(out)


def _make_items() -> list[dict]:
    """Built-in tasks: five families, four variants each, with hidden cases computed from a reference."""
    items: list[dict] = []
    for k in (1, 3, 7, 13):
        cases = [[[s], _caesar(s, k)] for s in ("abc", "Hello, World!", "xyz", "Zebra 42", "")]
        items.append(
            {
                "id": f"caesar-{k}",
                "family": "caesar",
                "solution": f"def solve(text):\n    out = []\n    for ch in text:\n        if ch.islower():\n            out.append(chr((ord(ch) - 97 + {k}) % 26 + 97))\n        elif ch.isupper():\n            out.append(chr((ord(ch) - 65 + {k}) % 26 + 65))\n        else:\n            out.append(ch)\n    return ''.join(out)\n",
                "spec": f"`solve(text)` returns text with every ASCII letter shifted {k} places forward in "
                "the alphabet (wrapping z to a, keeping case); other characters are unchanged.",
                "cases": cases,
            }
        )
    for size in (2, 3, 4, 5):
        data = [list(range(n)) for n in (0, 1, 5, 9, 12)]
        cases = [[[d], [d[i : i + size] for i in range(0, len(d), size)]] for d in data]
        items.append(
            {
                "id": f"chunk-{size}",
                "family": "chunk",
                "solution": f"def solve(values):\n    return [values[i : i + {size}] for i in range(0, len(values), {size})]\n",
                "spec": f"`solve(values)` splits the list into consecutive chunks of {size} elements and "
                "returns the list of chunks; the last chunk may be shorter; an empty list gives [].",
                "cases": cases,
            }
        )
    for lo, hi in ((0, 10), (-5, 5), (1, 3), (100, 200)):
        data = [[-20, 0, 4, 11], [lo, hi], [hi + 1, lo - 1], [], [150, 2, -3]]
        cases = [[[d], [min(max(x, lo), hi) for x in d]] for d in data]
        items.append(
            {
                "id": f"clamp-{lo}-{hi}",
                "family": "clamp",
                "solution": f"def solve(values):\n    return [min(max(x, {lo}), {hi}) for x in values]\n",
                "spec": f"`solve(values)` returns a new list where every number is clamped to [{lo}, {hi}].",
                "cases": cases,
            }
        )
    for sep in (",", ";", "|", " "):
        data = ["a", "a" + sep + "b", "x" + sep + sep + "y", "", sep + "lead"]
        cases = [[[d], [p for p in d.split(sep) if p]] for d in data]
        items.append(
            {
                "id": f"split-{ord(sep)}",
                "family": "split",
                "solution": f"def solve(text):\n    return [p for p in text.split({sep!r}) if p]\n",
                "spec": f"`solve(text)` splits text on {sep!r} and returns the non-empty parts in order.",
                "cases": cases,
            }
        )
    for base in (2, 8, 16, 3):
        nums = [0, 1, 7, 255, 1000]
        cases = []
        for n in nums:
            digits = ""
            m = n
            while True:
                digits = "0123456789abcdef"[m % base] + digits
                m //= base
                if m == 0:
                    break
            cases.append([[n], digits])
        items.append(
            {
                "id": f"base-{base}",
                "family": "to_base",
                "solution": f"def solve(n):\n    digits = ''\n    while True:\n        digits = '0123456789abcdef'[n % {base}] + digits\n        n //= {base}\n        if n == 0:\n            return digits\n",
                "spec": f"`solve(n)` returns the base-{base} representation of the non-negative integer n as a "
                "lowercase string without prefix (0 gives '0').",
                "cases": cases,
            }
        )
    return items


# Families held out for eval: unseen task kinds, not unseen constants.
EVAL_FAMILIES = ("to_base",)


class HiddenTestsEnv(HermesAgentBaseEnv):
    """Code written by the agent in its sandbox, graded by hidden tests run in that same sandbox."""

    name = "blind3-hidden-tests"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=10,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=20,
            group_size=4,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-hidden-tests",
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
        self._eval_items = [i for i in items if i["family"] in EVAL_FAMILIES]
        self._items = [i for i in items if i["family"] not in EVAL_FAMILIES]
        random.Random(3).shuffle(self._items)
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"Create `solution.py` in your working directory defining {item['spec']}\n"
            "Hidden tests will import `solve` from solution.py. Check your code by running it before you finish."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        present = await ctx.aterminal("test -f solution.py", timeout=10)
        if present["exit_code"] != 0:
            return 0.0
        await ctx.awrite_file(CHECKER, _CHECKER_SOURCE)
        await ctx.awrite_file(CASES_FILE, json.dumps(item["cases"]))
        nonce = secrets.token_hex(8)
        run = await ctx.aterminal(f"echo {nonce} | python3 {CHECKER} {CASES_FILE}", timeout=20)
        passed = {
            int(parts[2])
            for parts in (line.split() for line in run["output"].splitlines())
            if len(parts) == 3 and parts[0] == nonce and parts[1] == "PASS" and parts[2].isdigit()
        }
        # Credit what passed; a crash, an import error or a timeout prints no PASS and earns nothing.
        return round(len(passed & set(range(len(item["cases"])))) / len(item["cases"]), 6)

    def conformance_transcripts(self, item: dict) -> dict:
        """Known-good and known-bad model turns for this item (a reference solution saved and run; a claim)."""
        good = [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "solution.py", "content": item["solution"]}}
                ]
            },
            {"tool_calls": [{"name": "terminal", "arguments": {"command": "python3 -c 'import solution'"}}]},
            {"content": "solution.py implements solve as specified."},
        ]
        bad = [{"content": "Done, solve is implemented."}]
        return {"good": [good], "bad": [bad]}

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
        samples = []
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
            samples.append({"id": item["id"], "score": score, "turns": result.turns_used})
        n = max(1, len(scores))
        metrics = {
            "eval/mean_pass_rate": sum(scores) / n,
            "eval/fully_solved": sum(1 for s in scores if s == 1.0) / n,
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
    HiddenTestsEnv.cli()
