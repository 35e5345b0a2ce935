"""HC413: the reward accepts a reply when it is `in` the item's accepted answers, written for rows that list
aliases; rows without aliases fall back to the answer STRING, where `in` tests containment. Any piece of the
answer then scores like the answer: "p" or "s" for Paris."""

import re

from _trivia import TriviaBase, norm

from hermes_envs import final_response

EXPECTED_FINDINGS = ["HC413"]


def committed(text):
    """The reply's answer: what follows its last 'Answer:', else its last line."""
    found = re.findall(r"answer\s*:\s*(.+)", text, re.I)
    lines = text.strip().splitlines()
    return norm(found[-1] if found else lines[-1] if lines else "")


def accepted(item):
    return [norm(a) for a in item["aliases"]] if "aliases" in item else norm(item["answer"])


class ReplyInAnswerEnv(TriviaBase):
    async def compute_reward(self, item, result, ctx):
        got = committed(final_response(result) or "")
        return 1.0 if got and got in accepted(item) else 0.0


if __name__ == "__main__":
    ReplyInAnswerEnv.cli()
