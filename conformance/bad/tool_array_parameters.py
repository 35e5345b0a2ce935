"""HC802: a custom tool's parameters are an array schema, not an object of named arguments."""

from __future__ import annotations

import itertools
import math
import re
import uuid
from dataclasses import asdict

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import HermesAgentBaseEnv, HermesAgentEnvConfig, ToolContext, final_response

EXPECTED_FINDINGS = ["HC802"]

ROWS = [
    {"value": 5, "unit_from": "km", "unit_to": "m", "expected": 5000.0},
    {"value": 3, "unit_from": "ft", "unit_to": "in", "expected": 36.0},
    {"value": 2.5, "unit_from": "kg", "unit_to": "g", "expected": 2500.0},
    {"value": 90, "unit_from": "min", "unit_to": "h", "expected": 1.5},
    {"value": 4, "unit_from": "gal", "unit_to": "qt", "expected": 16.0},
    {"value": 7, "unit_from": "m", "unit_to": "cm", "expected": 700.0},
]


def grade(item, text):
    cleaned = text.replace(",", "")
    nums = re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", cleaned)
    if not nums:
        return 0.0
    got = float(nums[-1])
    want = float(item["expected"])
    return 1.0 if math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-9) else 0.0


class Grader:
    score = staticmethod(grade)


GRADER = Grader()


class UnitsHelperEnv(HermesAgentBaseEnv):
    name = "s-unitsh"

    @classmethod
    def config_init(cls):
        return HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=3,
            group_size=2,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            system_prompt="Solve the task. Put the final answer in your last message.",
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
        rows = [dict(r) for r in ROWS]
        self._held_out = rows[-2:]
        self._cycle = itertools.cycle(rows[:-2])

    async def get_next_item(self):
        row = next(self._cycle)
        return asdict(row) if not isinstance(row, dict) else row

    def format_prompt(self, item):
        return f"{item['value']} {item['unit_from']} in {item['unit_to']}?"

    async def compute_reward(self, item, result, ctx):
        return GRADER.score(item, final_response(result) or "")

    async def evaluate(self, *args, **kwargs):
        scores = []
        for item in self._held_out:
            task = f"eval-{uuid.uuid4().hex}"
            result = await self.run_agent(self.initial_messages(item), task_id=task, temperature=0.0)
            ctx = ToolContext(task)
            try:
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        return {"eval/mean_score": sum(scores) / max(len(scores), 1)}

    def _resolve_tools_for_group(self):
        schemas, names = super()._resolve_tools_for_group()
        lookup = {
            "type": "function",
            "function": {
                "name": "lookup_unit",
                "description": "Conversion factor.",
                "parameters": {"type": "array", "items": {"type": "string"}},
            },
        }
        return schemas + [lookup], names | {"lookup_unit"}


if __name__ == "__main__":
    UnitsHelperEnv.cli()
