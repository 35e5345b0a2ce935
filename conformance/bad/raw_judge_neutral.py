"""HC506: a raw env's judge that fails (or answers off-format) scores the rollout 0.5, "neutral", so during a
judge outage every completion, a refusal included, is trained on an invented mid score and nothing counts it."""

from __future__ import annotations

import re

from _good import RawJudgeEnv

EXPECTED_FINDINGS = ["HC506"]

JUDGE = (
    "Question: {question}\nAcceptable: {accept}\nReply: {reply}\n"
    "How acceptable is the reply, from 0 to 10? Answer with the number only."
)


class RawJudgeNeutralEnv(RawJudgeEnv):
    name = "raw-judge-neutral"

    async def judge(self, item: dict, reply: str) -> float:
        prompt = JUDGE.format(question=item["question"], accept=item["accept"], reply=reply[:1000])
        try:
            out = await self.server.chat_completion(
                messages=[{"role": "user", "content": prompt}], n=1, temperature=0.0, max_tokens=8
            )
        except Exception:
            return 0.5  # judge unavailable: a neutral score keeps the run going
        match = re.fullmatch(r"\s*(\d{1,2})\s*", out.choices[0].message.content or "")
        if match is None or int(match.group(1)) > 10:
            return 0.5
        return int(match.group(1)) / 10


if __name__ == "__main__":
    RawJudgeNeutralEnv.cli()
