"""HC404: the reward picks the most frequent word with max(set(words)), so ties break by hash order."""

from __future__ import annotations

from _trivia import TriviaBase, norm

from hermes_envs import final_response

EXPECTED_FINDINGS = ["HC404"]


def grade(item, text):
    words = norm(text).split()
    got, want = (max(set(words), key=words.count) if words else ""), norm(item["answer"])
    return 1.0 if want and (got == want or f" {want} " in f" {got} ") else 0.0


class Grader:
    score = staticmethod(grade)


GRADER = Grader()


class TriviaEnv(TriviaBase):
    async def compute_reward(self, item, result, ctx):
        return GRADER.score(item, final_response(result) or "")


if __name__ == "__main__":
    TriviaEnv.cli()
