"""Summarise a short report in at most 40 words; an LLM judge grades faithfulness and coverage, with a fallback.

Modelled on NousResearch/atropos environments/arena_hard_environment.py (an LLM judge called through the env's own
server grades the policy's answer). The judge gets the report, the key facts and the summary, and must reply
``SCORE: <0-10>``. When the judge call fails or its reply is not a score, the reward falls back to the share of key
facts the summary covers (each fact is a set of words that must all appear). A summary over the word limit gets
half its score.
"""

from __future__ import annotations

import logging
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import AgentResult, HermesAgentBaseEnv, HermesAgentEnvConfig, ToolContext, final_response

logger = logging.getLogger(__name__)

MAX_WORDS = 40
SYSTEM_PROMPT = "You write short, faithful summaries. Reply with the summary only."
JUDGE_RUBRIC = (
    "You grade summaries. Given a report, its key facts and a summary, judge whether the summary states the key "
    "facts correctly and adds nothing false. 10 = every key fact, nothing false; 5 = some facts missing or one "
    "error; 0 = wrong or off-topic. Reply exactly 'SCORE: <integer 0-10>'."
)
_SCORE = re.compile(r"^\s*SCORE:\s*(\d{1,2})\s*$", re.IGNORECASE)

REPORTS = [
    (
        "At 02:10 the payments database ran out of disk space. Writes failed for 25 minutes until an engineer deleted "
        "old audit logs. No data was lost. The team will add disk alerts at 80 percent.",
        [["disk"], ["25", "minutes"], ["no", "lost"], ["alert"]],
    ),
    (
        "The Lisbon office moves to a new building on Rua Augusta on 1 March. Desks are packed on 27 February. Staff "
        "work from home on 28 February. Parking passes for the old garage end on the same day.",
        [["rua augusta"], ["1 march"], ["home"], ["parking"]],
    ),
    (
        "Version 4.2 of the mobile app fixes the crash when uploading photos over 20 MB, adds a dark mode, and drops "
        "support for Android 8. It ships to 10 percent of users first.",
        [["crash"], ["dark mode"], ["android 8"], ["10 percent"]],
    ),
    (
        "A storm closed the northern rail line for two days. Buses replaced trains between Oban and Crianlarich. The "
        "line reopened on Thursday after crews cleared three fallen trees.",
        [["storm"], ["buses"], ["thursday"], ["trees"]],
    ),
    (
        "The library extends its opening hours during exams: it stays open until midnight from 10 to 24 May, and the "
        "silent floor is reserved for students with an exam that week.",
        [["midnight"], ["10", "24 may"], ["silent"]],
    ),
    (
        "Quarterly revenue rose 12 percent to 48 million euros, driven by the new subscription plan. Costs rose 5 "
        "percent. The company hired 40 engineers and opened an office in Warsaw.",
        [["12 percent"], ["48 million"], ["subscription"], ["warsaw"]],
    ),
    (
        "The city will plant 3,000 trees along the river this autumn. Volunteers can register online until 15 "
        "September. Each volunteer gets gloves and a free lunch on planting day.",
        [["3,000"], ["river"], ["15 september"], ["volunteer"]],
    ),
    (
        "Flight BA117 was delayed four hours by a faulty fuel sensor. Passengers received meal vouchers. The aircraft "
        "was swapped and the flight left at 18:40.",
        [["four hours"], ["fuel sensor"], ["voucher"], ["18:40"]],
    ),
    (
        "The school canteen stops serving fried food from January. Fruit will be free at breakfast, and a survey asks "
        "parents which vegetarian dishes to add.",
        [["fried"], ["january"], ["fruit"], ["survey"]],
    ),
    (
        "An update to the thermostat firmware caused heaters to stay on overnight in 300 homes. The vendor rolled it "
        "back within six hours and will refund the extra energy cost.",
        [["firmware"], ["300 homes"], ["rolled back", "six hours"], ["refund"]],
    ),
]


def make_items() -> list[dict]:
    return [{"id": i, "report": text, "facts": facts} for i, (text, facts) in enumerate(REPORTS)]


def fact_share(item: dict, summary: str) -> float:
    """Share of the item's key facts whose words all appear in the summary (case-insensitive)."""
    text = summary.lower()
    return sum(all(w in text for w in fact) for fact in item["facts"]) / len(item["facts"])


class SummaryJudgeEnv(HermesAgentBaseEnv):
    """Short summaries graded by an LLM judge on the env's server; key-fact coverage when the judge fails."""

    name = "summary-judge"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="summary-judge",
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
        items = make_items()
        self.train_items = items[:7]
        self.eval_items = items[7:]
        self.iter = 0
        self.judge_failures = 0
        self._eval_metrics: dict[str, float] = {}

    async def get_next_item(self) -> dict:
        item = self.train_items[self.iter % len(self.train_items)]
        self.iter += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Summarise this report in at most {MAX_WORDS} words:\n\n{item['report']}"

    async def _judge(self, item: dict, summary: str) -> float | None:
        """The judge's grade in [0, 1]; None when the call fails or the reply is not a 0-10 score."""
        facts = "; ".join(" ".join(f) for f in item["facts"])
        messages = [
            {"role": "system", "content": JUDGE_RUBRIC},
            {
                "role": "user",
                "content": f"Report:\n{item['report']}\n\nKey facts: {facts}\n\n"
                f"Summary (between the markers):\n<<<\n{summary[:2000]}\n>>>",
            },
        ]
        try:
            completion = await self.server.chat_completion(
                messages=messages, n=1, temperature=0.0, max_tokens=16
            )
            reply = completion.choices[0].message.content or ""
        except Exception as exc:
            logger.warning("judge call failed (%s: %s); scoring by key facts", type(exc).__name__, exc)
            return None
        match = _SCORE.match(reply)
        if match is None or int(match.group(1)) > 10:
            logger.warning("judge replied %r, not 'SCORE: 0-10'; scoring by key facts", reply[:80])
            return None
        return int(match.group(1)) / 10

    async def grade(self, item: dict, summary: str) -> float:
        if not summary.strip():
            return 0.0
        judged = await self._judge(item, summary)
        if judged is None:
            self.judge_failures += 1
            score = fact_share(item, summary)
        else:
            score = judged
        if len(summary.split()) > MAX_WORDS:
            score *= 0.5
        return score

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        return await self.grade(item, final_response(result) or "")

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        failures_before = self.judge_failures
        total, samples = 0.0, []
        for item in self.eval_items:
            task_id = f"eval-{item['id']}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            score = await self.score_rollout(item, result, task_id)
            total += score
            samples.append({"id": item["id"], "summary": final_response(result), "score": score})
        eval_failures = self.judge_failures - failures_before
        self.judge_failures = failures_before  # train/judge_failures counts training rollouts only
        n = max(1, len(self.eval_items))
        self._eval_metrics = {"eval/mean_score": total / n, "eval/judge_fallback_rate": eval_failures / n}
        await self.evaluate_log(
            metrics=self._eval_metrics,
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = {**(wandb_metrics or {}), **self._eval_metrics}
        self._eval_metrics = {}
        wandb_metrics["train/judge_failures"] = self.judge_failures
        self.judge_failures = 0
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    SummaryJudgeEnv.cli()
