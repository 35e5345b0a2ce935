"""The trivia env the trivia mutants share (one correct env, each mutant overrides only its mistake): the good
JSON-fields env (helper-heavy, on hermes_envs directly, an evaluate() that returns its metrics) asked trivia
questions with the terminal and file toolsets, string golds compared case-insensitively through a grader object."""

from __future__ import annotations

import itertools
import re

from _good import PeopleEnv

from hermes_envs import final_response

ROWS = [
    {"question": "What is the capital of France?", "answer": "Paris"},
    {"question": "Which planet is known as the red planet?", "answer": "Mars"},
    {"question": "What is the chemical symbol for gold?", "answer": "Au"},
    {"question": "Who wrote Hamlet?", "answer": "Shakespeare"},
    {"question": "What is the largest ocean?", "answer": "Pacific"},
    {"question": "What gas do plants absorb?", "answer": "Carbon dioxide"},
]


def norm(s):
    s = re.sub(r"[*_`#>\"'.,!?()\[\]]", " ", s.lower())
    return " ".join(s.split())


def grade(item, text):
    got, want = norm(text), norm(item["answer"])
    return 1.0 if want and (got == want or f" {want} " in f" {got} ") else 0.0


class Grader:
    score = staticmethod(grade)


GRADER = Grader()


class TriviaBase(PeopleEnv):
    name = "s-trivia"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        config.enabled_toolsets = ["terminal", "file"]
        return config, servers

    async def setup(self):
        rows = [dict(r) for r in ROWS]
        self._held_out = rows[-2:]
        self._cycle = itertools.cycle(rows[:-2])

    def format_prompt(self, item):
        return item["question"]

    async def compute_reward(self, item, result, ctx):
        return GRADER.score(item, final_response(result) or "")


__all__ = ["GRADER", "ROWS", "Grader", "TriviaBase", "grade", "norm"]
