"""Write an arithmetic expression that reaches a target from given numbers, answered in a ```python fence the
prompt asks for; graded by evaluating the expression safely (numbers and + - * / only) (upstream layout)."""

from __future__ import annotations

import ast
import time
from collections import Counter
from fractions import Fraction

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

DATA = [
    {"numbers": [8, 4, 6], "target": 24, "solution": "(8 - 4) * 6"},
    {"numbers": [3, 5, 7], "target": 22, "solution": "3 * 5 + 7"},
    {"numbers": [9, 2, 4], "target": 17, "solution": "9 + 2 * 4"},
    {"numbers": [10, 5, 3], "target": 6, "solution": "10 / 5 * 3"},
    {"numbers": [7, 7, 2], "target": 47, "solution": "7 * 7 - 2"},
    {"numbers": [6, 3, 8], "target": 10, "solution": "6 / 3 + 8"},
]

_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}


class Unreadable(ValueError):
    """The reply's expression is not arithmetic on numbers (a syntax error, a name, a call)."""


def last_fence(text: str) -> str | None:
    """The body of the reply's last ```python (or bare ```) block."""
    for fence in ("```python", "```"):
        start = text.rfind(fence)
        if start != -1:
            body = text[start + len(fence) :]
            end = body.find("```")
            if end != -1:
                return body[:end].strip() or None
    return None


def evaluate_expression(source: str) -> tuple[Fraction, Counter]:
    """The exact value of an arithmetic expression and the numbers it uses; Unreadable for anything else."""
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise Unreadable(str(exc)) from None
    used: Counter = Counter()

    def walk(node: ast.AST) -> Fraction:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            used[node.value] += 1
            return Fraction(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            right = walk(node.right)
            if right == 0:
                raise Unreadable("division by zero")
            return walk(node.left) / right
        raise Unreadable(f"not arithmetic: {type(node).__name__}")

    return walk(tree.body), used


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


def grade(item, text):
    source = last_fence(text)
    if source is None:
        return 0.0
    try:
        value, used = evaluate_expression(source)
    except Unreadable:
        return 0.0
    return 1.0 if value == item["target"] and used == Counter(item["numbers"]) else 0.0


class ExpressionEnv(HermesAgentBaseEnv):
    name = "s-expression"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            group_size=4,
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
        rows = list(DATA)
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        numbers = ", ".join(str(n) for n in item["numbers"])
        return (
            f"Using each of the numbers {numbers} exactly once, with + - * / and parentheses, write an expression "
            f"equal to {item['target']}. End with the expression alone in a ```python block."
        )

    async def compute_reward(self, item, result, ctx):
        return grade(item, last_answer(result))

    async def evaluate(self, *args, **kwargs):
        t0 = time.time()
        tools, names = self._resolve_tools_for_group()
        total = 0.0
        for item in self.test:
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run([{"role": "user", "content": self.format_prompt(item)}])
            ctx = ToolContext(loop.task_id)
            try:
                total += await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/expression_accuracy": total / len(self.test)}, start_time=t0, end_time=time.time()
        )


if __name__ == "__main__":
    ExpressionEnv.cli()
