"""m_script_exit_status: the reward trusts the runner's exit status 0 as "every hidden case passed", but the
exit status belongs to the solution under test: a module that calls ``os._exit(0)`` at import earns full credit."""

from __future__ import annotations

from .conftest import answer, group_scores, write_file

EXITS_AT_IMPORT = "import os\n\nos._exit(0)\n"


async def test_m_script_exit_status() -> None:
    script = [write_file("solution.py", EXITS_AT_IMPORT), answer("Done, all tests pass.")[0]]
    correct, _ = await group_scores("unit_tests_env.py", script)
    mutant, _ = await group_scores("m_script_exit_status.py", script)
    assert correct == [0.0, 0.0]
    assert mutant == [1.0, 1.0]
