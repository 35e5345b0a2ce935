"""The atroposlib environment base (imports atroposlib: import this module only when you need the env)."""

from hermes_envs.env.base import HermesAgentBaseEnv
from hermes_envs.env.config import HermesAgentEnvConfig
from hermes_envs.env.distributions import list_distributions, register_distribution, sample_toolsets
from hermes_envs.env.trajectory import tokenize_transcript, transcript_spans

__all__ = [
    "HermesAgentBaseEnv",
    "HermesAgentEnvConfig",
    "list_distributions",
    "register_distribution",
    "sample_toolsets",
    "tokenize_transcript",
    "transcript_spans",
]
