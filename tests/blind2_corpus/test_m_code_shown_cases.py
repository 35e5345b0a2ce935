"""m_code_shown_cases: the prompt shows the hidden grading cases, so a lookup table of them passes everything."""

from __future__ import annotations

import ast
import re

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, group_scores, load, save_solution_script


async def _lookup_table_score(stem: str) -> list[float]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["task"] == "digit_root")
    with FakeOpenAIServer(script=[{"content": "unused"}]) as server:
        prompt = build(module.CodeExecEnv, server.base_url).format_prompt(item)
    shown = {
        ast.literal_eval(x): ast.literal_eval(y) for x, y in re.findall(r"solve\((.+?)\) == (.+)", prompt)
    }
    source = f"TABLE = {shown!r}\n\ndef solve(n):\n    return TABLE.get(n)\n"
    with FakeOpenAIServer(script=save_solution_script("solution.py", source)) as server:
        return await group_scores(module, "CodeExecEnv", server, item)


async def test_a_lookup_table_of_the_prompt_passes_on_the_mutant_only() -> None:
    assert await _lookup_table_score("m_code_shown_cases") == [1.0, 1.0]
    assert await _lookup_table_score("code_exec_env") == [0.0, 0.0]
