"""The kit calls an env's methods as atroposlib's drivers do: under the env's runtime (its sandbox settings and model
server for the tools), and an evaluate() watched for rollouts that failed on the model server. The base class no
longer rewrites the author's methods to get either."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_envs.conformance import EnvSession, Settings
from hermes_envs.tools.toolsets.model import model_endpoint

GOOD = Path(__file__).resolve().parents[2] / "conformance" / "good"


def test_the_kit_runs_an_envs_own_methods_under_its_runtime() -> None:
    async def tool_server(env: Any) -> str:
        return model_endpoint("probe").base_url

    with EnvSession(GOOD / "exact_answer_env.py", settings=Settings()) as session:
        env = session.env()
        assert session.run_env(tool_server) == env.runtime.model_endpoint.base_url


def test_an_evaluate_the_kit_runs_reports_its_rollouts_that_failed_on_the_server() -> None:
    def failing(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": "x", "fault": 500}

    with EnvSession(GOOD / "exact_answer_env.py", settings=Settings()) as session:
        session.run_env(lambda env: env.setup(), phase="setup")
        with session.responding(failing) as made:
            session.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate")
        env = session.env()
        assert made and env.eval_server_errors == len(env.eval_items) > 0
