"""Fix texts cite the API of the base the env really uses: ``self.run_agent`` only where the base has it."""

from __future__ import annotations

from atroposlib.envs.base import BaseEnv

from hermes_envs.conformance.checks.evaluate import _agent_loop_fix
from hermes_envs.env import HermesAgentBaseEnv


class UpstreamStyleBase(BaseEnv):
    """Like upstream hermes-agent's base: tools resolved per group, no ``run_agent``."""

    def _resolve_tools_for_group(self) -> tuple[list[dict], set[str]]:
        return [], set()


def test_hc701_fix_on_upstreams_base_runs_the_loop_itself() -> None:
    fix = _agent_loop_fix(type("Env", (UpstreamStyleBase,), {}))
    assert "run_agent" not in fix
    assert "self._resolve_tools_for_group()" in fix and "HermesAgentLoop(server=self.server" in fix


def test_hc701_fix_on_our_base_uses_run_agent() -> None:
    fix = _agent_loop_fix(type("Env", (HermesAgentBaseEnv,), {}))
    assert "self.run_agent(messages, temperature=0.0)" in fix and "HermesAgentLoop(" not in fix
