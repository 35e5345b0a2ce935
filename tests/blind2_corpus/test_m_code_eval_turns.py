"""m_code_eval_turns: evaluate() allows one turn, so an agent that looks around before saving scores 0 in eval."""

from __future__ import annotations

import inspect
from typing import Any

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load


def _solver_policy(module) -> Any:
    """List the working directory, save the reference implementation of the task asked for, then reply."""

    def policy(body: dict[str, Any]) -> dict[str, Any]:
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            return {"tool_calls": [{"name": "terminal", "arguments": {"command": "ls -a"}}]}
        if turn == 2:
            return {"content": "Saved solution.py."}
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        fn = next(f for contract, f in module.TASKS.values() if contract in prompt)
        source = inspect.getsource(fn) + f"\n\nsolve = {fn.__name__}\n"
        return {
            "tool_calls": [{"name": "write_file", "arguments": {"path": "solution.py", "content": source}}]
        }

    return policy


async def _eval_and_train(stem: str) -> tuple[dict[str, float], list[float]]:
    module = load(stem)
    with FakeOpenAIServer(policy=_solver_policy(module)) as server:
        env = build(module.CodeExecEnv, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(env._eval_items[0])
        env._eval_items = env._eval_items[:2]
        await env.evaluate()
    return dict(env._eval_metrics), list(group["scores"])


async def test_the_same_agent_solves_in_training_but_scores_zero_in_eval_on_the_mutant() -> None:
    metrics, train = await _eval_and_train("m_code_eval_turns")
    assert train == [1.0, 1.0] and metrics["eval/pass_rate"] == 0.0
    metrics, train = await _eval_and_train("code_exec_env")
    assert train == [1.0, 1.0] and metrics["eval/pass_rate"] == 1.0
