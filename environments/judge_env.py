"""Explain a Python snippet: an open-ended answer scored by an LLM judge, with a keyword fallback.

The model may run the snippet in its terminal, then explains what it prints and why. ``compute_reward`` asks a
judge, through the env's own server (``self.server.chat_completion(..., temperature=0)``), for a 0-10 score against
a rubric and the reference explanation: ONE judge call per rollout. When the judge fails or answers something that
is not a score, the reward falls back to the share of the item's keywords the answer mentions. Judge and keywords
are weighted and the result clamped to [0, 1].

    pytest --hermes-conformance environments/judge_env.py
    python environments/judge_env.py process --env.total_steps 1 --env.group_size 2 ...
"""

from __future__ import annotations

import logging
import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are a Python tutor with a terminal. Run code when it helps you be sure, then explain clearly and briefly "
    "what the snippet prints and why."
)
JUDGE_RUBRIC = (
    "You grade explanations of Python code. Compare the student's explanation with the reference. "
    "10 = correct output and correct reason; 5 = correct output or reason, not both, or partly wrong; "
    "0 = wrong, missing or off-topic. Reply with a single integer from 0 to 10 and nothing else."
)
# How much the judge and the keywords count when the judge answers; the keywords alone when it does not.
W_JUDGE, W_KEYWORDS = 0.8, 0.2
_SCORE = re.compile(r"^\s*(?:score\s*[:=]\s*)?(\d+(?:\.\d+)?)\s*(?:/\s*10)?\s*\.?\s*$", re.IGNORECASE)

# (snippet, reference explanation, keywords a good explanation mentions that the question does not contain)
_DATA = [
    (
        "print(0.1 + 0.2 == 0.3)",
        "It prints False: 0.1 and 0.2 have no exact binary floating point representation, "
        "so their sum is 0.30000000000000004, not 0.3.",
        ["False", "floating", "binary"],
    ),
    (
        "print([1, 2, 3] * 2)",
        "It prints [1, 2, 3, 1, 2, 3]: multiplying a list by an integer repeats it.",
        ["[1, 2, 3, 1, 2, 3]", "repeat"],
    ),
    (
        "print('3' * 3)",
        "It prints 333: multiplying a string by an integer repeats the string.",
        ["333", "repeat"],
    ),
    (
        "x = [1, 2]\ny = x\ny.append(3)\nprint(x)",
        "It prints [1, 2, 3]: y is another name for the same list object, so appending through y changes x.",
        ["[1, 2, 3]", "same", "object"],
    ),
    (
        "print(7 // 2, 7 % 2)",
        "It prints 3 1: // is floor division and % the remainder.",
        ["3 1", "floor", "remainder"],
    ),
    (
        "print(-7 // 2)",
        "It prints -4: floor division rounds toward negative infinity, not toward zero.",
        ["-4", "negative infinity", "floor"],
    ),
    (
        "print(bool([]), bool([0]))",
        "It prints False True: an empty list is falsy, a non-empty list is truthy even if it holds 0.",
        ["False True", "empty", "falsy"],
    ),
    (
        "print(sorted('banana'))",
        "It prints ['a', 'a', 'a', 'b', 'n', 'n']: sorted turns the string into a list of "
        "its characters in order.",
        ["['a', 'a', 'a', 'b', 'n', 'n']", "characters", "list"],
    ),
    (
        "print(len({1, 1, 2, 3, 3}))",
        "It prints 3: a set keeps only distinct elements.",
        ["3", "distinct", "duplicates"],
    ),
    (
        "print({'a': 1, 'a': 2})",
        "It prints {'a': 2}: a repeated key in a dict literal keeps the last value.",
        ["{'a': 2}", "key", "last"],
    ),
    (
        "def f(x, acc=[]):\n    acc.append(x)\n    return acc\nf(1)\nprint(f(2))",
        "It prints [1, 2]: the default list "
        "is created once, when the function is defined, and shared between calls.",
        ["[1, 2]", "once", "shared"],
    ),
    (
        "print('a,b,,c'.split(','))",
        "It prints ['a', 'b', '', 'c']: split keeps an empty string between two commas.",
        ["['a', 'b', '', 'c']", "empty string"],
    ),
    (
        "print(round(2.5), round(3.5))",
        "It prints 2 4: round uses banker's rounding, to the nearest even integer on a tie.",
        ["2 4", "even", "banker"],
    ),
    (
        "print(list(range(10, 0, -3)))",
        "It prints [10, 7, 4, 1]: range counts down by 3 and stops before 0.",
        ["[10, 7, 4, 1]", "step", "stop"],
    ),
    (
        "print('hello'[1:4])",
        "It prints ell: the slice takes indexes 1, 2 and 3; the end index is excluded.",
        ["ell", "excluded", "index"],
    ),
    (
        "print(type(1 / 2).__name__)",
        "It prints float: true division always returns a float in Python 3.",
        ["float", "true division"],
    ),
    (
        "a, *b = [1, 2, 3]\nprint(b)",
        "It prints [2, 3]: the starred name collects the remaining items as a list.",
        ["[2, 3]", "remaining", "starred"],
    ),
    (
        "print(any([]), all([]))",
        "It prints False True: any of nothing is False, all of nothing is vacuously True.",
        ["False True", "vacuous", "empty"],
    ),
    (
        "print(1 < 2 < 3 < 2)",
        "It prints False: comparisons chain, so this means 1 < 2 and 2 < 3 and 3 < 2, and the last is false.",
        ["False", "chain", "and"],
    ),
    (
        "print('abc' < 'abd', 'Z' < 'a')",
        "It prints True True: strings compare character by character by code "
        "point, and uppercase letters come before lowercase ones.",
        ["True True", "code point", "uppercase"],
    ),
    (
        "t = (1, [2])\nt[1].append(3)\nprint(t)",
        "It prints (1, [2, 3]): the tuple is immutable but the list inside it is mutable and can change.",
        ["(1, [2, 3])", "immutable", "mutable"],
    ),
    (
        "print([i * i for i in range(4) if i % 2])",
        "It prints [1, 9]: the comprehension keeps the odd numbers 1 and 3 and squares them.",
        ["[1, 9]", "odd", "squares"],
    ),
    (
        "print(int('0x1f', 16))",
        "It prints 31: int parses the hexadecimal string in base 16, and the 0x prefix is allowed.",
        ["31", "hexadecimal", "prefix"],
    ),
    (
        "print(' a b '.strip().split(' '))",
        "It prints ['a', 'b']: strip removes the outer spaces, then split on a "
        "space separates the two letters.",
        ["['a', 'b']", "whitespace", "outer"],
    ),
    (
        "print(divmod(17, 5))",
        "It prints (3, 2): divmod returns the quotient and the remainder as a tuple.",
        ["(3, 2)", "quotient", "remainder"],
    ),
    (
        "print(max('apple', 'fig', key=len))",
        "It prints apple: with key=len, max compares lengths, and apple is the longest.",
        ["apple", "length", "longest"],
    ),
    (
        "print(2 ** 3 ** 2)",
        "It prints 512: exponentiation is right-associative, so it is 2 ** 9.",
        ["512", "right-associative", "2 ** 9"],
    ),
    (
        "print(None or 0 or 'x')",
        "It prints x: `or` returns the first truthy operand, and None and 0 are falsy.",
        ["x", "truthy", "falsy"],
    ),
    (
        "s = 'hi'\ns.upper()\nprint(s)",
        "It prints hi: strings are immutable; upper returns a new string that is discarded.",
        ["hi", "immutable", "new string"],
    ),
    (
        "print(list(zip('ab', [1, 2, 3])))",
        "It prints [('a', 1), ('b', 2)]: zip stops at the shortest input.",
        ["[('a', 1), ('b', 2)]", "shortest", "stops"],
    ),
]


def _make_items() -> list[dict]:
    """Built-in dataset: Python snippets with a reference explanation and the keywords of a good answer."""
    return [{"snippet": s, "reference": ref, "keywords": kws} for s, ref, kws in _DATA]


class JudgeEnv(HermesAgentBaseEnv):
    """Code explanations scored by an LLM judge (one call per rollout), keyword overlap when the judge fails."""

    name = "explain-snippet-judge"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=6,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=30,
            group_size=4,
            total_steps=100,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="explain-snippet-judge",
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
        random.Random(5).shuffle(items)
        eval_size = max(6, int(len(items) * 0.2))
        self._eval_items = items[:eval_size]
        self._items = items[eval_size:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []
        self._judge_failures = 0

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"What does this Python snippet print, and why?\n\n```python\n{item['snippet']}\n```"

    @staticmethod
    def _final_answer(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    def _keyword_score(self, item: dict, answer: str) -> float:
        """Share of the item's keywords in the answer; keywords already in the prompt earn nothing."""
        prompt = self.format_prompt(item).lower()
        keywords = [k.lower() for k in item["keywords"] if k.lower() not in prompt]
        if not keywords:
            return 0.0
        text = answer.lower()
        return sum(1 for k in keywords if k in text) / len(keywords)

    async def _judge(self, item: dict, answer: str) -> float | None:
        """One judge call; the score in [0, 1], or None when the call fails or the reply is not a 0-10 number."""
        messages = [
            {"role": "system", "content": JUDGE_RUBRIC},
            {
                "role": "user",
                "content": f"Snippet:\n```python\n{item['snippet']}\n```\n\nReference explanation:\n"
                f"{item['reference']}\n\nStudent explanation:\n{answer[:4000]}\n\nScore (0-10):",
            },
        ]
        try:
            completion = await self.server.chat_completion(
                messages=messages, n=1, temperature=0.0, max_tokens=8
            )
            reply = completion.choices[0].message.content or ""
        except Exception as exc:  # the judge is best effort: fall back to keywords, but say so
            logger.warning("judge call failed (%s: %s); using the keyword score", type(exc).__name__, exc)
            return None
        match = _SCORE.match(reply)
        if not match or not 0.0 <= float(match.group(1)) <= 10.0:
            logger.warning("judge answered %r, not a 0-10 score; using the keyword score", reply[:80])
            return None
        return float(match.group(1)) / 10.0

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        answer = self._final_answer(result)
        if not answer.strip():
            return 0.0  # nothing to judge: no judge call
        keywords = self._keyword_score(item, answer)
        judged = await self._judge(item, answer)
        if judged is None:
            self._judge_failures += 1
            score = keywords
        else:
            score = W_JUDGE * judged + W_KEYWORDS * keywords
        return max(0.0, min(1.0, score))

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        total = 0.0
        used_tools = 0
        samples = []
        # compute_reward counts judge failures for train/judge_failures; eval must not add to that count.
        train_failures = self._judge_failures
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
            total += score
            used_tools += any(m.get("role") == "tool" for m in result.messages)
            samples.append({"snippet": item["snippet"], "answer": self._final_answer(result), "score": score})
        n = max(1, len(self._eval_items))
        eval_failures, self._judge_failures = self._judge_failures - train_failures, train_failures
        metrics = {
            "eval/mean_score": total / n,
            "eval/tool_use_rate": used_tools / n,
            "eval/judge_failures": eval_failures,
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
        wandb_metrics["train/judge_failures"] = self._judge_failures
        self._judge_failures = 0
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    JudgeEnv.cli()
