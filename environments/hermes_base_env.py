"""Upstream-layout import path: ``from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig``."""

from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig

__all__ = ["HermesAgentBaseEnv", "HermesAgentEnvConfig"]
