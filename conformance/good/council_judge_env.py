"""A judge reward with NO gold answer, in the shape of upstream's ouroboros env: research questions, a judge model
(through self.server, temperature 0) rates the final report 0-10; an unparseable verdict falls back to a small
length-based credit; a bonus for having used the tools. Items hold a question and a category, nothing else.

Regression guard for HC412 (issue 29): the kit's fake model is the judge here, so a transcript "without the answer"
scoring as well as the kit's guessed gold (the category) is no counterexample; at most a warning.
"""

from __future__ import annotations

import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs import final_response

QUESTIONS = [
    {
        "question": "What are the trade-offs between monolithic and modular software architectures?",
        "category": "technology",
    },
    {
        "question": "How do automated market makers compare to order books in capital efficiency?",
        "category": "economics",
    },
    {"question": "What evidence exists for and against universal basic income?", "category": "economics"},
    {
        "question": "What are the most promising approaches to nuclear fusion and their timelines?",
        "category": "science",
    },
    {"question": "How effective are economic sanctions as a foreign policy tool?", "category": "governance"},
    {
        "question": "When are prediction markets better than expert committees for forecasting?",
        "category": "strategy",
    },
]

RUBRIC = (
    "You are grading a research report.\nQuestion: {question}\nReport: {report}\n"
    "Rate depth, evidence and accuracy together. Reply with 'SCORE: <0-10>'."
)


class CouncilJudgeEnv(HermesAgentBaseEnv):
    name = "council-judge"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=6,
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
        self.test, self.train = QUESTIONS[:2], QUESTIONS[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return f"Research this question and write an evidence-backed report: {item['question']}"

    async def _judge(self, item, report: str) -> float | None:
        try:
            reply = await self.server.chat_completion(
                messages=[
                    {"role": "user", "content": RUBRIC.format(question=item["question"], report=report)}
                ],
                n=1,
                temperature=0.0,
                max_tokens=32,
            )
            verdict = reply.choices[0].message.content or ""
        except Exception:
            return None
        found = re.search(r"SCORE:\s*(\d+(?:\.\d+)?)", verdict)
        return min(10.0, float(found.group(1))) / 10.0 if found else None

    async def compute_reward(self, item, result, ctx):
        report = final_response(result) or ""
        if len(report) < 50:
            return 0.0
        judged = await self._judge(item, report)
        quality = judged if judged is not None else min(1.0, len(report) / 2000) * 0.3
        tools = sum(1 for m in result.messages if m.get("role") == "tool")
        return max(0.0, min(1.0, 0.8 * quality + 0.2 * min(1.0, tools / 3) * (quality > 0)))

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/report_score")


if __name__ == "__main__":
    CouncilJudgeEnv.cli()
