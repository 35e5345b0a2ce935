"""m_code_verdict_cache: verdicts are cached by solution text alone, so one item's verdict is reused on another."""

from __future__ import annotations

import inspect

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load, save_solution_script


async def _scores_on_two_items(stem: str) -> tuple[list[float], list[float]]:
    module = load(stem)
    items = module._make_items()
    digit_root = next(i for i in items if i["task"] == "digit_root")
    rle = next(i for i in items if i["task"] == "rle")
    source = inspect.getsource(module._digit_root) + "\n\nsolve = _digit_root\n"
    with FakeOpenAIServer(script=save_solution_script("solution.py", source)) as server:
        env = build(module.CodeExecEnv, server.base_url)
        await env.setup()
        first, _ = await env.collect_trajectories(digit_root)
        second, _ = await env.collect_trajectories(rle)  # same code, a task it does not solve
    return list(first["scores"]), list(second["scores"])


async def test_a_solution_for_one_task_is_credited_on_another_task_on_the_mutant() -> None:
    assert await _scores_on_two_items("m_code_verdict_cache") == ([1.0, 1.0], [1.0, 1.0])
    assert await _scores_on_two_items("code_exec_env") == ([1.0, 1.0], [0.0, 0.0])
