"""The trivia env the trivia mutants share (one correct env, each mutant overrides only its mistake): the good
JSON-fields env (helper-heavy, on hermes_envs directly, an evaluate() that returns its metrics) asked trivia
questions (the raw QA env's data and grading) with the terminal and file toolsets, string golds compared
case-insensitively through a grader object."""

from __future__ import annotations

import itertools

from _good import RAW_QA_DATA as ROWS
from _good import PeopleEnv
from _good import qa_grade as grade
from _good import qa_norm as norm

from hermes_envs import final_response


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
