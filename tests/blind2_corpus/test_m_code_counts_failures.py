"""m_code_counts_failures: the grader counts reported failures, so a solution that cannot even be imported passes."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load, save_solution_script


async def _broken_solution_score(stem: str) -> list[float]:
    module = load(stem)
    item = module._make_items()[0]
    script = save_solution_script("solution.py", "def solve(x)\n    return x\n")  # a syntax error
    with FakeOpenAIServer(script=script) as server:
        return await group_scores(module, "CodeExecEnv", server, item)


async def test_a_syntax_error_scores_full_on_the_mutant_and_zero_on_the_base() -> None:
    assert await _broken_solution_score("m_code_counts_failures") == [1.0, 1.0]
    assert await _broken_solution_score("code_exec_env") == [0.0, 0.0]
