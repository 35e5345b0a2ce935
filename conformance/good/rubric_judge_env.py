"""Summaries graded by a rubric judge with NO gold answer: compute_reward asks the judge (through self.server, at
temperature 0) for a 0-10 score and RAISES when the reply is not one, so the base counts a reward error instead of
training on a made-up score; evaluate() leaves such items out and counts them (the blind corpus's summary shape).

Regression guard for HC402: under the kit the judge's reply is the fake server's scripted text, so a raise after the
reward's own model call is no evidence against the env (a warning, not an error).
"""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

EXPECTED_WARNINGS = ["HC402"]

PASSAGES = [
    "The council approved electric buses after a two-year review; they enter service in 2028.",
    "A hospital will hire forty nurses before winter because demand grew faster than expected.",
    "The library moves its archive online next spring, despite objections from some readers.",
    "The port authority postponed raising parking fees after a narrow vote.",
    "A startup cut weekend hours to save money, following complaints about rising costs.",
    "The university will build a second bridge across the river, officials said on Monday.",
    "The city voted to replace diesel ferries with hybrid ones by 2030.",
    "A regional museum doubled its opening hours after record summer visits.",
]
RUBRIC = (
    "Rate the one-sentence summary of the passage from 0 (wrong or invented) to 10 (every key fact, nothing "
    "invented). Reply with the integer only."
)
SCORE = re.compile(r"^\s*(\d{1,2})\s*(?:/\s*10)?\s*$")
MAX_WORDS = 25


def _final(result: AgentResult) -> str:
    for message in reversed(result.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return message["content"].strip()
    return ""


class RubricJudgeEnv(HermesAgentBaseEnv):
    """Open-ended summaries; the judge's integer score is the reward."""

    name = "good-rubric-judge"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=2,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="hermes",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self) -> None:
        items = [{"id": f"p{i}", "passage": text} for i, text in enumerate(PASSAGES)]
        self.eval_items, self.train_items = items[:2], items[2:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Summarize in one sentence of at most {MAX_WORDS} words:\n\n{item['passage']}"

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        summary = _final(result)
        if not summary or len(summary.split()) > MAX_WORDS:
            return 0.0
        completion = await self.server.chat_completion(
            messages=[
                {"role": "system", "content": RUBRIC},
                {"role": "user", "content": f"Passage: {item['passage']}\n\n<summary>{summary}</summary>"},
            ],
            n=1,
            temperature=0.0,
            max_tokens=8,
        )
        reply = completion.choices[0].message.content or ""
        match = SCORE.match(reply)
        if match is None or int(match.group(1)) > 10:
            raise ValueError(f"the judge's reply is not a 0-10 score: {reply!r}")
        return int(match.group(1)) / 10

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores, failed = [], 0
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            ctx = ToolContext(task_id)
            try:
                scores.append(await self.compute_reward(item, result, ctx))
            except ValueError:  # no verdict from the judge: says nothing about the model
                failed += 1
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={
                "eval/judge_score": sum(scores) / max(1, len(scores)),
                "eval/judge_errors": float(failed),
            },
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    RubricJudgeEnv.cli()
