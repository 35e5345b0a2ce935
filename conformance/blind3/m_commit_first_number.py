"""Derived from commit_message_judge_env.py.

Write a commit message for a diff; no gold message exists, a judge grades it against a rubric.

The agent sees a unified diff (it may inspect it further with the terminal, which holds nothing else) and replies
with a commit message. ``compute_reward`` asks a judge through the env's own server (temperature 0, one call per
rollout) to reason briefly over a four-point rubric and end with a line ``SCORE: <0-10>``. The score is read from
that final line only. A judge that fails or does not give a score is an error of the reward, raised with what was
seen: there is no gold to fall back on, and inventing a score would train on noise.
"""

from __future__ import annotations

import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You write git commit messages: a summary line of at most 60 characters in the imperative mood, a blank line, "
    "then a short body saying why the change was made. Reply with the message only."
)
JUDGE_SYSTEM = (
    "You review commit messages. Rubric: (1) the summary line is imperative and at most 60 characters; "
    "(2) it describes what the diff actually changes; (3) the body explains why; (4) nothing is invented. "
    "Think in at most four short lines, one per criterion, then end with a final line 'SCORE: <integer 0-10>'."
)
_SCORE_LINE = re.compile(r"^\s*SCORE:\s*(\d{1,2})\s*$", re.IGNORECASE | re.MULTILINE)


class JudgeUnavailable(RuntimeError):
    """The judge could not grade a rollout (server error or no SCORE line)."""


def _diff(path: str, before: list[str], after: list[str], ctx_line: str) -> str:
    minus = "\n".join(f"-{line}" for line in before)
    plus = "\n".join(f"+{line}" for line in after)
    return f"--- a/{path}\n+++ b/{path}\n@@ -10,{len(before) + 1} +10,{len(after) + 1} @@\n {ctx_line}\n{minus}\n{plus}"


_DIFFS = [
    (
        "src/cache.py",
        ["    ttl = 60"],
        ["    ttl = settings.CACHE_TTL"],
        "def make_cache(settings):",
    ),
    (
        "src/http.py",
        ["    return requests.get(url)"],
        ["    return requests.get(url, timeout=10)"],
        "def fetch(url):",
    ),
    (
        "src/users.py",
        ["    if user.age > 18:"],
        ["    if user.age >= 18:"],
        "def is_adult(user):",
    ),
    (
        "src/report.py",
        ["    rows = sorted(rows)"],
        ["    rows = sorted(rows, key=lambda r: r.date)"],
        "def build_report(rows):",
    ),
    (
        "src/paths.py",
        ["    return base + '/' + name"],
        ["    return os.path.join(base, name)"],
        "def child(base, name):",
    ),
    (
        "src/retry.py",
        ["    for attempt in range(3):"],
        ["    for attempt in range(max_attempts):"],
        "def with_retry(fn, max_attempts=3):",
    ),
    (
        "src/log.py",
        ["    print(msg)"],
        ["    logger.info(msg)"],
        "def note(msg):",
    ),
    (
        "src/parse.py",
        ["    return int(text)"],
        ["    return int(text.strip())"],
        "def parse_count(text):",
    ),
    (
        "src/auth.py",
        ["    if token == expected:"],
        ["    if hmac.compare_digest(token, expected):"],
        "def check(token, expected):",
    ),
    (
        "src/money.py",
        ["    return round(amount * rate, 2)"],
        ["    return (Decimal(amount) * Decimal(rate)).quantize(Decimal('0.01'))"],
        "def convert(amount, rate):",
    ),
    (
        "src/queue.py",
        ["    items.pop(0)"],
        ["    items.popleft()"],
        "def take(items):",
    ),
    (
        "src/config.py",
        ["    debug = True"],
        ["    debug = os.environ.get('APP_DEBUG') == '1'"],
        "class Config:",
    ),
]


def _make_items() -> list[dict]:
    return [{"id": f"diff-{i}", "diff": _diff(*d)} for i, d in enumerate(_DIFFS)]


class CommitMessageJudgeEnv(HermesAgentBaseEnv):
    """Open-ended output with no reference: an LLM judge with a rubric is the whole reward."""

    name = "blind3-commit-message-judge"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=3,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=100,
            steps_per_eval=25,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-commit-message-judge",
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
        random.Random(17).shuffle(items)
        self._eval_items = items[:3]
        self._items = items[3:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []
        self._judge_errors = 0

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Write the commit message for this change:\n\n```diff\n{item['diff']}\n```"

    @staticmethod
    def _message(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def _judge(self, item: dict, message: str) -> float:
        prompt = f"Diff:\n```diff\n{item['diff']}\n```\n\nCommit message:\n{message[:3000]}"
        try:
            completion = await self.server.chat_completion(
                messages=[{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": prompt}],
                n=1,
                temperature=0.0,
                max_tokens=200,
            )
        except Exception as exc:
            self._judge_errors += 1
            raise JudgeUnavailable(f"the judge call failed ({type(exc).__name__}: {exc})") from exc
        reply = completion.choices[0].message.content or ""
        scores = re.findall(r"\b(\d{1,2})\b", reply)
        if not scores or int(scores[0]) > 10:
            self._judge_errors += 1
            raise JudgeUnavailable(f"the judge gave no 'SCORE: 0-10' line; it said {reply[-120:]!r}")
        return int(scores[0]) / 10.0

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        message = self._message(result).strip()
        if not message:
            return 0.0
        return await self._judge(item, message)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
        samples = []
        train_judge_errors = self._judge_errors  # eval's judge errors go to eval/judge_errors only
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
            except JudgeUnavailable:
                continue  # not graded: left out of the mean, counted in eval/judge_errors below
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"id": item["id"], "message": self._message(result), "score": score})
        self._judge_errors = train_judge_errors
        metrics = {
            "eval/judge_score": sum(scores) / max(1, len(scores)),
            "eval/graded": float(len(scores)),
            "eval/judge_errors": float(len(self._eval_items) - len(scores)),
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
        wandb_metrics["train/judge_errors"] = self._judge_errors
        self._judge_errors = 0
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    CommitMessageJudgeEnv.cli()
