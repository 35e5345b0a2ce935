"""m_script_pipe_exit: the hidden-test run is piped through ``tail``, whose exit status (always 0) replaces the
runner's, so a rollout that saved no solution at all gets full credit."""

from __future__ import annotations

from .conftest import answer, group_scores


async def test_m_script_pipe_exit() -> None:
    claims_only = answer("I wrote solution.py and all tests pass.")
    correct, _ = await group_scores("unit_tests_env.py", claims_only)
    mutant, _ = await group_scores("m_script_pipe_exit.py", claims_only)
    assert correct == [0.0, 0.0]
    assert mutant == [1.0, 1.0]
