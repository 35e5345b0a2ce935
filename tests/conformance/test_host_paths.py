"""Absolute host paths on ``local``: an env gets upstream's behaviour (its file tools reach the host's files) unless
its config turns ``terminal_host_paths`` off; under the conformance kit they stay in the task's folder, whatever the
env or the run's ``--env.*`` settings ask."""

from __future__ import annotations

from pathlib import Path

from hermes_envs.conformance import EnvSession, Settings
from hermes_envs.env import HermesAgentEnvConfig

GOOD = Path(__file__).resolve().parents[2] / "conformance" / "good" / "file_task_env.py"


def test_an_env_config_reaches_host_paths_by_default_and_can_turn_it_off() -> None:
    assert HermesAgentEnvConfig().terminal_host_paths is True
    assert HermesAgentEnvConfig(terminal_host_paths=False).terminal_host_paths is False


def test_the_kit_keeps_host_paths_contained_even_when_the_run_asks_for_them() -> None:
    with EnvSession(GOOD, settings=Settings(env={"terminal_host_paths": True})) as session:
        env = session.env()
        assert env.config.terminal_host_paths is False
        assert env._sandbox_config.host_paths is False
