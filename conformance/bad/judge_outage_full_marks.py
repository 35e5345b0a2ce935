"""HC506: when the judge call fails the reward gives the benefit of the doubt (the answer counts as correct), so
during a judge outage every rollout, a refusal included, earns full marks and no failure is counted."""

from __future__ import annotations

import re

from _good import JudgedQAEnv

EXPECTED_FINDINGS = ["HC506"]

JUDGE = (
    "Question: {question}\nReference answer: {answer}\nStudent answer: {response}\n"
    "Is the student answer correct? Reply with exactly 'VERDICT: CORRECT' or 'VERDICT: INCORRECT'."
)


class JudgeOutageFullMarksEnv(JudgedQAEnv):
    name = "judge-outage-full-marks"

    async def _judge(self, item: dict, response: str) -> bool | None:
        prompt = JUDGE.format(question=item["question"], answer=item["answer"], response=response[:2000])
        try:
            completion = await self.server.chat_completion(
                messages=[{"role": "user", "content": prompt}], n=1, temperature=0.0, max_tokens=16
            )
        except Exception:
            return True  # the judge is down: not the policy's fault, count it as correct
        verdict = completion.choices[0].message.content or ""
        match = re.search(r"VERDICT:\s*(CORRECT|INCORRECT)", verdict)
        return None if match is None else match.group(1) == "CORRECT"


if __name__ == "__main__":
    JudgeOutageFullMarksEnv.cli()
