"""Fix a small Python script: the model saves a corrected ``task.py`` in its sandbox; the reward runs it.

The reward verifies the rollout's work where it happened: ``compute_reward`` runs ``python3 task.py`` in the
rollout's own sandbox through ToolContext and compares the output with the expected one, with partial credit
(the file exists, it runs, the share of output lines that match). It uses the awaitable twins
(``await ctx.aterminal(...)``), so a slow script never stalls the other rollouts on the event loop.

    pytest --hermes-conformance environments/file_task_env.py
    python environments/file_task_env.py process --env.total_steps 1 --env.group_size 2 ...
"""

from __future__ import annotations

import random
import textwrap
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You are a careful Python developer with a terminal and file tools in a private working directory. "
    "Fix the script you are given, save it, run it to check, then reply with one sentence about the fix."
)
SCRIPT_NAME = "task.py"

# Weights of the partial credit; they sum to 1.0.
W_EXISTS, W_RUNS, W_OUTPUT = 0.1, 0.2, 0.7


def _task(kind: str, description: str, buggy: str, solution: str, expected: list[object]) -> dict:
    return {
        "kind": kind,
        "description": description,
        "buggy": textwrap.dedent(buggy).strip() + "\n",
        "solution": textwrap.dedent(solution).strip() + "\n",
        "expected_output": "\n".join(str(x) for x in expected),
    }


def _make_items() -> list[dict]:
    """Built-in dataset: buggy scripts (five kinds of bug, many parameters) with a reference fix each."""
    items = []
    for n in range(3, 15):
        items.append(
            _task(
                "off_by_one",
                f"print the squares of 1 to {n} inclusive, one per line",
                f"""
            n = {n}
            for i in range(1, n):
                print(i * i)
            """,
                f"""
            n = {n}
            for i in range(1, n + 1):
                print(i * i)
            """,
                [i * i for i in range(1, n + 1)],
            )
        )
    for start in range(2, 14):
        values = list(range(start, start + 4))
        items.append(
            _task(
                "wrong_operator",
                f"print the running total of {values}, one line per step",
                f"""
            total = 0
            for x in {values}:
                total = total - x
                print(total)
            """,
                f"""
            total = 0
            for x in {values}:
                total = total + x
                print(total)
            """,
                [sum(values[: i + 1]) for i in range(len(values))],
            )
        )
    for word in [
        "search",
        "python",
        "sandbox",
        "reward",
        "atropos",
        "hermes",
        "kernel",
        "lambda",
        "tensor",
        "vector",
        "gradient",
        "rollout",
    ]:
        items.append(
            _task(
                "slicing",
                f"print the word {word!r} reversed, then its length",
                f"""
            word = {word!r}
            print(word[1::-1])
            print(len(word) - 1)
            """,
                f"""
            word = {word!r}
            print(word[::-1])
            print(len(word))
            """,
                [word[::-1], len(word)],
            )
        )
    for a, b in [
        (3, 4),
        (10, 20),
        (7, 8),
        (12, 30),
        (5, 95),
        (41, 1),
        (19, 23),
        (60, 6),
        (2, 2),
        (33, 44),
        (8, 15),
        (100, 250),
    ]:
        items.append(
            _task(
                "type_error",
                f"read two numbers from strings and print their sum ({a} and {b}), then their product",
                f"""
            a = "{a}"
            b = "{b}"
            print(a + b)
            print(a * b)
            """,
                f"""
            a = int("{a}")
            b = int("{b}")
            print(a + b)
            print(a * b)
            """,
                [a + b, a * b],
            )
        )
    for limit in range(15, 27):
        items.append(
            _task(
                "fizzbuzz",
                f"print FizzBuzz from 1 to {limit} (Fizz for multiples of 3, Buzz of 5, FizzBuzz of both)",
                f"""
            for i in range(1, {limit} + 1):
                if i % 3 == 0:
                    print("Fizz")
                elif i % 5 == 0:
                    print("Buzz")
                elif i % 15 == 0:
                    print("FizzBuzz")
                else:
                    print(i)
            """,
                f"""
            for i in range(1, {limit} + 1):
                if i % 15 == 0:
                    print("FizzBuzz")
                elif i % 3 == 0:
                    print("Fizz")
                elif i % 5 == 0:
                    print("Buzz")
                else:
                    print(i)
            """,
                [
                    "FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else i
                    for i in range(1, limit + 1)
                ],
            )
        )
    return items


class FileTaskEnv(HermesAgentBaseEnv):
    """Bug fixing verified in the rollout's sandbox, with partial credit for getting part of the way."""

    name = "file-task"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=8,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=30,
            group_size=4,
            total_steps=100,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="file-task",
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
        random.Random(11).shuffle(items)
        eval_size = max(10, int(len(items) * 0.2))
        self._eval_items = items[:eval_size]
        self._items = items[eval_size:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"This script should {item['description']}, but it has a bug:\n\n"
            f"```python\n{item['buggy']}```\n\n"
            f"Save a corrected version as `{SCRIPT_NAME}` in your working directory (write_file or the terminal), "
            f"run it with `python3 {SCRIPT_NAME}` to check it, then say in one sentence what you fixed."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        # The sandbox starts empty: without a tool call there is no file to run.
        if not any(msg.get("role") == "tool" for msg in result.messages):
            return 0.0
        # The verdict comes from the sandbox, not from what the model claims: run the file it left behind.
        check = await ctx.aterminal(f"test -f {SCRIPT_NAME}", timeout=10)
        if check["exit_code"] != 0:
            return 0.0
        score = W_EXISTS
        run = await ctx.aterminal(f"python3 {SCRIPT_NAME}", timeout=10)
        if run["exit_code"] == 0:
            score += W_RUNS
        expected = item["expected_output"].splitlines()
        got = run["output"].strip().splitlines()
        matching = sum(1 for want, have in zip(expected, got) if want.strip() == have.strip())
        if len(got) > len(expected):  # extra lines dilute the match, so printing everything is not a strategy
            matching -= len(got) - len(expected)
        score += W_OUTPUT * max(0, matching) / len(expected)
        return max(0.0, min(1.0, round(score, 6)))

    def conformance_transcripts(self, item: dict) -> dict:
        """Model turns the conformance kit plays through the agent loop (check HC407): a good rollout must score
        above doing nothing; a bad one (claiming a fix without saving it) is one more negative control."""
        good = [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": SCRIPT_NAME, "content": item["solution"]}}
                ]
            },
            {"tool_calls": [{"name": "terminal", "arguments": {"command": f"python3 {SCRIPT_NAME}"}}]},
            {"content": "Fixed the bug; the script prints the expected output now."},
        ]
        bad = [{"content": "I fixed the script; it works now."}]
        return {"good": [good], "bad": [bad]}

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        solved = 0
        total = 0.0
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
            solved += score == 1.0
            total += score
            samples.append(
                {
                    "kind": item["kind"],
                    "description": item["description"],
                    "score": score,
                    "turns": result.turns_used,
                }
            )
        n = max(1, len(self._eval_items))
        metrics = {"eval/solved_rate": solved / n, "eval/mean_score": total / n}
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
    FileTaskEnv.cli()
