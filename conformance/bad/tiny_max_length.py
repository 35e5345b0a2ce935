"""HC504: max_token_length=16, shorter than any rollout: atroposlib drops every group as too long."""

from __future__ import annotations

import itertools
import re
import uuid
from dataclasses import asdict

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import HermesAgentBaseEnv, HermesAgentEnvConfig, ToolContext, final_response

EXPECTED_FINDINGS = ["HC504"]

ROWS = [
    {"question": "What is the capital of France?", "answer": "Paris"},
    {"question": "Which planet is known as the red planet?", "answer": "Mars"},
    {"question": "What is the chemical symbol for gold?", "answer": "Au"},
    {"question": "Who wrote Hamlet?", "answer": "Shakespeare"},
    {"question": "What is the largest ocean?", "answer": "Pacific"},
    {"question": "What gas do plants absorb?", "answer": "Carbon dioxide"},
]


def norm(s):
    s = re.sub(r"[*_`#>\"'.,!?()\[\]]", " ", s.lower())
    return " ".join(s.split())


def grade(item, text):
    got, want = norm(text), norm(item["answer"])
    return 1.0 if want and (got == want or f" {want} " in f" {got} ") else 0.0


class Grader:
    score = staticmethod(grade)


GRADER = Grader()


class TriviaEnv(HermesAgentBaseEnv):
    name = "s-trivia"

    @classmethod
    def config_init(cls):
        return HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=3,
            group_size=2,
            max_token_length=16,
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
        return item["question"]

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
    TriviaEnv.cli()
