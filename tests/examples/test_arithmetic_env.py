"""environments/arithmetic_env.py: scripted transcripts, conformance, and the documented process/evaluate commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import run_conformance
from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import ENVIRONMENTS, SCRIPTS, atropos_command, build, example, run_command

ENV_FILE = ENVIRONMENTS / "arithmetic_env.py"
mod = example("arithmetic_env")
ITEM = mod._make_items()[0]


async def scores(server: FakeOpenAIServer, script: list[dict]) -> list[float]:
    server.script = script
    env = build(mod.ArithmeticTerminalEnv, server.base_url)
    await env.setup()
    group, _ = await env.collect_trajectories(ITEM)
    return group["scores"]


async def test_right_answer_beats_wrong_answer(fake_openai: FakeOpenAIServer) -> None:
    expression = ITEM["expression"]
    terminal = {
        "tool_calls": [{"name": "terminal", "arguments": {"command": f"python3 -c 'print({expression})'"}}]
    }
    good = await scores(fake_openai, [terminal, {"content": f"Answer: {ITEM['answer']}"}])
    wrong_with_tool = await scores(fake_openai, [terminal, {"content": "Answer: 7"}])
    wrong = await scores(fake_openai, [{"content": "Answer: 7"}])
    assert good == [1.0, 1.0] and wrong_with_tool == [0.1, 0.1] and wrong == [0.0, 0.0]


def test_conformance_passes() -> None:
    report = run_conformance([str(ENV_FILE)])
    assert not report.failed, report.to_text()


@pytest.mark.slow
def test_evaluate_command(tmp_path: Path) -> None:
    """README command: fake-server with environments/scripts/arithmetic.yaml, then `evaluate` on the whole eval set.

    The same script's `process` run is tests/cli/test_cli.py::test_readme_step_4_process_run_against_the_cli_fake_server
    (one group, tokens and masks, the tool turn, the HTML page, no unmatched request).
    """
    with FakeOpenAIServer(script=SCRIPTS / "arithmetic.yaml", strict=True) as server:
        done = run_command(atropos_command(ENV_FILE, "evaluate", server.base_url, tmp_path))
        assert done.returncode == 0, done.stderr[-3000:]
        server.assert_no_failures()
    samples = (tmp_path / "evals" / "samples.jsonl").read_text().splitlines()
    assert len(samples) == 20


async def test_a_decimal_rendering_of_the_right_integer_scores_full() -> None:
    """HC410 found it: 'The answer is 35736.0' scored 0 (the number regex stopped at the point and the last
    number it saw was '0'); numbers are compared as numbers now."""
    import importlib.util
    from pathlib import Path

    from hermes_envs.agent import AgentResult

    spec = importlib.util.spec_from_file_location(
        "arith_decimal_probe", Path(__file__).parents[2] / "environments" / "arithmetic_env.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    env = module.ArithmeticTerminalEnv.__new__(module.ArithmeticTerminalEnv)
    item = {"question": "What is 854 * 42 - 132?", "expression": "854 * 42 - 132", "answer": "35736"}
    for text in ("The answer is 35736.0", "Answer: 35,736", "Answer: 35736"):
        result = AgentResult(messages=[{"role": "assistant", "content": text}], turns_used=1)
        assert await env.compute_reward(item, result, None) == 1.0, text
