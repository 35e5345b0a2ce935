"""m_workspace_eval_turns: evaluation runs the agent with max_turns=3 while training allows 12, so a five-step task
that training completes can never be completed in eval: eval under-reports the policy the training produced."""

from __future__ import annotations

import re

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build, terminal


def step_by_step_agent(body: dict) -> dict:
    """Does one requirement per turn (five tool turns), then says DONE."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    p = re.search(r"project folder `(\w+)`", prompt).group(1)
    pkg = re.search(rf"`{p}/src/(\w+)`", prompt).group(1)
    version = re.search(r'__version__ = "([\d.]+)"', prompt).group(1)
    greeting = re.search(r"prints exactly `([^`]+)`", prompt).group(1)
    steps = [
        f"mkdir -p {p}/src/{pkg} {p}/scripts",
        f"printf '__version__ = \"{version}\"\\n' > {p}/src/{pkg}/__init__.py",
        f"printf '# {p}\\n' > {p}/README.md",
        f"printf '__pycache__/\\n' > {p}/.gitignore",
        f"printf '#!/bin/sh\\necho \"{greeting}\"\\n' > {p}/scripts/run.sh && chmod +x {p}/scripts/run.sh",
    ]
    done = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return terminal(steps[done]) if done < len(steps) else {"content": "DONE"}


async def eval_and_train(name: str) -> tuple[float, list[float]]:
    with FakeOpenAIServer(policy=step_by_step_agent) as server:
        env = build(name, server.base_url)
        await env.setup()
        env._eval_items = env._eval_items[:1]
        await env.evaluate()
        group, _ = await env.collect_trajectories(env._items[0])
        server.assert_no_failures()
        return dict(env._eval_metrics)["eval/mean_score"], group["scores"]


async def test_m_workspace_eval_turns() -> None:
    assert await eval_and_train("workspace_setup_env.py") == (1.0, [1.0, 1.0])
    eval_score, train_scores = await eval_and_train("m_workspace_eval_turns.py")
    assert train_scores == [1.0, 1.0]  # training completes the task
    assert eval_score == 0.6  # eval stops after three of the five steps
