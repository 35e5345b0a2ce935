"""HC505: collect_trajectory catches the model server's error and scores an empty completion 0.0, so an outage
becomes a full group of training data (raw atroposlib BaseEnv; the correct twin lets the error propagate)."""

from _good import RawSumEnv
from atroposlib.envs.base import ScoredDataItem

EXPECTED_FINDINGS = ["HC505", "HC507"]


class ErrorAsZeroEnv(RawSumEnv):
    name = "group-scores-server-errors"

    async def collect_trajectory(self, item: dict) -> tuple[ScoredDataItem | None, list]:
        messages = [{"role": "user", "content": self.prompt(item)}]
        try:
            completion = await self.server.chat_completion(
                messages=messages, n=1, temperature=1.0, max_tokens=64
            )
            reply = completion.choices[0].message.content or ""
        except Exception:  # the mistake: a failed request becomes an empty answer, scored like a wrong one
            reply = ""
        messages.append({"role": "assistant", "content": reply})
        tokens, masks = self.tokenize(messages)
        return ScoredDataItem(
            tokens=tokens,
            masks=masks,
            scores=self.score(item, reply),
            messages=messages,
            advantages=None,
            ref_logprobs=None,
            group_overrides=None,
            overrides=None,
            images=None,
        ), []


if __name__ == "__main__":
    ErrorAsZeroEnv.cli()
