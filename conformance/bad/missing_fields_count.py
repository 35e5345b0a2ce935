"""HC406: partial credit counts a missing field as right (got.get(k, v) == v), so {} earns full marks."""

from __future__ import annotations

import itertools
import json
import re
import uuid
from dataclasses import asdict

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import HermesAgentBaseEnv, HermesAgentEnvConfig, ToolContext, final_response

EXPECTED_FINDINGS = ["HC406"]

ROWS = [
    {"text": "Ann Berg, 31, lives in Oslo.", "fields": {"name": "Ann Berg", "age": 31, "city": "Oslo"}},
    {
        "text": "Carlos Ruiz is 45 and lives in Lima.",
        "fields": {"name": "Carlos Ruiz", "age": 45, "city": "Lima"},
    },
    {"text": "Mei Chen (27) moved to Taipei.", "fields": {"name": "Mei Chen", "age": 27, "city": "Taipei"}},
    {
        "text": "Aged 52, Omar Haddad calls Amman home.",
        "fields": {"name": "Omar Haddad", "age": 52, "city": "Amman"},
    },
    {"text": "Lena Vogel, 38, of Graz.", "fields": {"name": "Lena Vogel", "age": 38, "city": "Graz"}},
    {
        "text": "Tom Reed is 19; he lives in Leeds.",
        "fields": {"name": "Tom Reed", "age": 19, "city": "Leeds"},
    },
]


def parse_object(text):
    m = re.search(r"\{.*\}", text, re.S)
    if not m:
        return None
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def same(a, b):
    if isinstance(b, str):
        return isinstance(a, str) and a.strip().lower() == b.lower()
    return a == b


class Grader:
    @staticmethod
    def score(item, text):
        return grade(item, text)


def grade(item, text):
    got = parse_object(text)
    if got is None:
        return 0.0
    gold = item["fields"]
    return sum(1.0 for k, v in gold.items() if same(got.get(k, v), v)) / len(gold)


GRADER = Grader()


class PeopleEnv(HermesAgentBaseEnv):
    name = "s-people"

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
        return "Extract name, age and city as a JSON object: " + item["text"]

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


if __name__ == "__main__":
    PeopleEnv.cli()
