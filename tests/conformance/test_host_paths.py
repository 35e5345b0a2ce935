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
        assert env.runtime.sandbox.host_paths is False


RAW = Path(__file__).resolve().parents[2] / "conformance" / "good" / "raw_atropos_env.py"


def test_the_kit_keeps_host_paths_contained_for_an_env_that_is_not_a_hermes_env() -> None:
    """A raw atroposlib env calling the file tools itself got the process default (host paths on, on local): its
    write to an absolute path under the kit landed in the host's file. Sandboxes made in its runs now get them off."""
    from hermes_envs.tools import configure_sandboxes
    from hermes_envs.tools.sandbox import sandbox_config

    configure_sandboxes(
        backend="local"
    )  # the process default (an env built earlier in this process changed it)

    async def settings_in_a_run(env: object) -> bool:
        return sandbox_config().host_paths

    with EnvSession(RAW, settings=Settings()) as session:
        assert session.run_env(settings_in_a_run) is False
    assert sandbox_config().host_paths is True  # and nothing leaks out of the session
