"""Write a commit message for a diff; an LLM judge scores it against a four-point rubric.

There is no single right message, so a judge (the env's own model server, temperature 0, one call per rollout)
answers yes/no for each rubric point and the reward is the share of yeses. Two points are also checked in code
(subject line at most 72 characters; a blank line between subject and body) and a failed check caps that point
at "no" whatever the judge says. When the judge fails or answers off-format, the reward falls back to the two
code checks alone, scaled to at most 0.5, and says so in the log: a judge outage must not pay full marks.
"""

from __future__ import annotations

import logging
import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You write git commit messages. Reply with the commit message only: an imperative subject line of at most "
    "72 characters, a blank line, then a short body explaining why the change was made."
)
RUBRIC = (
    "You review git commit messages against a diff. Answer each question with yes or no, one per line, in the "
    "form 'N: yes' or 'N: no' and nothing else.\n"
    "1: Is the subject line in the imperative mood and about this change?\n"
    "2: Does the message name the component or function that changed?\n"
    "3: Does the body explain why the change was made, not only what changed?\n"
    "4: Is everything the message claims actually in the diff (no invented changes)?"
)
_VERDICT = re.compile(r"^\s*([1-4])\s*:\s*(yes|no)\b", re.IGNORECASE | re.MULTILINE)

CHANGES = [
    (
        "parse_date",
        "utils/dates.py",
        "return datetime.strptime(s, '%d/%m/%Y')",
        "return datetime.strptime(s.strip(), '%d/%m/%Y')",
        "input with surrounding spaces failed to parse",
    ),
    (
        "retry_fetch",
        "net/client.py",
        "for attempt in range(3):",
        "for attempt in range(self.max_retries):",
        "the retry count ignored the configured max_retries",
    ),
    (
        "render_total",
        "billing/invoice.py",
        "total = sum(line.price for line in lines)",
        "total = sum(line.price * line.qty for line in lines)",
        "quantities were ignored in invoice totals",
    ),
    (
        "load_config",
        "app/config.py",
        "with open(path) as f:",
        "with open(path, encoding='utf-8') as f:",
        "non-ASCII config files failed on Windows",
    ),
    (
        "cache_key",
        "core/cache.py",
        "key = f'{user}:{item}'",
        "key = f'{user.id}:{item.id}'",
        "keys used object reprs, so the cache never hit",
    ),
    (
        "close_session",
        "db/session.py",
        "self.conn.close()",
        "if self.conn is not None:\n+        self.conn.close()",
        "closing twice raised AttributeError",
    ),
    (
        "paginate",
        "api/views.py",
        "end = start + page_size - 1",
        "end = start + page_size",
        "each page dropped its last row",
    ),
    (
        "send_email",
        "notify/mail.py",
        "timeout=None",
        "timeout=10",
        "a hung SMTP server blocked the worker forever",
    ),
]


def _make_items(seed: int = 17) -> list[dict]:
    """Built-in dataset: small diffs (one function each, in several file contexts) with a reference message."""
    rng = random.Random(seed)
    items = []
    for func, path, old, new, why in CHANGES:
        for indent in ("    ", "        "):
            for ctx_line in ("", "    log.debug('start')\n"):
                diff = f"--- a/{path}\n+++ b/{path}\n@@ def {func}(...):\n{ctx_line}-{indent}{old}\n+{indent}{new}\n"
                reference = f"Fix {func}: {why.split(',')[0]}\n\nBefore this change {why}."
                items.append({"func": func, "path": path, "diff": diff, "why": why, "reference": reference})
    rng.shuffle(items)
    return items


def code_checks(message: str) -> tuple[bool, bool]:
    """(subject at most 72 characters and not empty, blank line then a non-empty body)."""
    lines = message.strip().splitlines()
    subject_ok = bool(lines) and 0 < len(lines[0].strip()) <= 72
    body_ok = len(lines) >= 3 and lines[1].strip() == "" and any(line.strip() for line in lines[2:])
    return subject_ok, body_ok


class CommitJudgeEnv(HermesAgentBaseEnv):
    """Commit messages scored by a rubric judge with code checks and a capped fallback."""

    name = "commit-judge"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=2,
            system_prompt=SYSTEM_PROMPT,
            group_size=6,
            total_steps=120,
            steps_per_eval=40,
            max_token_length=3072,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="commit-judge",
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
        held_out = {
            "cache_key",
            "send_email",
        }  # split by function, so eval diffs are not near-copies of training
        self._eval_items = [i for i in items if i["func"] in held_out]
        self._items = [i for i in items if i["func"] not in held_out]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Write the commit message for this diff:\n\n```diff\n{item['diff']}```"

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def _judge(self, item: dict, message: str) -> dict[int, bool] | None:
        """One judge call; the four verdicts, or None when the call fails or the reply is not four verdicts."""
        request = [
            {"role": "system", "content": RUBRIC},
            {
                "role": "user",
                "content": f"Diff:\n{item['diff']}\nCommit message:\n<<<\n{message[:3000]}\n>>>",
            },
        ]
        try:
            completion = await self.server.chat_completion(
                messages=request, n=1, temperature=0.0, max_tokens=40
            )
            reply = completion.choices[0].message.content or ""
        except Exception as exc:
            logger.warning(
                "judge call failed (%s: %s); scoring with the code checks only", type(exc).__name__, exc
            )
            return None
        verdicts = {int(n): v.lower() == "yes" for n, v in _VERDICT.findall(reply)}
        if set(verdicts) != {1, 2, 3, 4}:
            logger.warning(
                "judge reply %r is not four verdicts; scoring with the code checks only", reply[:80]
            )
            return None
        return verdicts

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        message = self._final_text(result)
        if not message.strip():
            return 0.0
        subject_ok, body_ok = code_checks(message)
        verdicts = await self._judge(item, message)
        if verdicts is None:
            return 0.25 * (subject_ok + body_ok)
        verdicts[1] = verdicts[1] and subject_ok
        verdicts[3] = verdicts[3] and body_ok
        return sum(verdicts.values()) / 4

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        mean = await self.evaluate_items(self._eval_items, "eval/rubric_score")
        self._eval_metrics.append(("eval/rubric_score", mean))
        self._eval_metrics.append(("eval/seconds", time.time() - start))

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    CommitJudgeEnv.cli()
