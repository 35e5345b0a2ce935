"""The atroposlib environment base (imports atroposlib: import this module only when you need the env).

Import from here. ``distributions`` stays importable by path (docs/toolsets.md reads its ``DISTRIBUTIONS``); the
``_name`` modules are the implementation and may change (the rule is in docs/architecture.md).
"""

from hermes_envs.env._base import HermesAgentBaseEnv, RewardTypeError, current_env
from hermes_envs.env._config import HermesAgentEnvConfig
from hermes_envs.env._display import format_trajectory
from hermes_envs.env._loader import (
    defines_env_class,
    env_files_in,
    find_env_classes,
    import_env_module,
    looks_like_env_file,
)
from hermes_envs.env._managed import HermesManagedServer, ParserTranslator
from hermes_envs.env._trajectory import tokenize_transcript, transcript_spans
from hermes_envs.env.distributions import (
    DistributionError,
    list_distributions,
    register_distribution,
    sample_toolsets,
)
from hermes_envs.tools import EnvRuntime

__all__ = [
    "DistributionError",
    "EnvRuntime",
    "HermesAgentBaseEnv",
    "HermesAgentEnvConfig",
    "HermesManagedServer",
    "ParserTranslator",
    "RewardTypeError",
    "current_env",
    "defines_env_class",
    "env_files_in",
    "find_env_classes",
    "format_trajectory",
    "import_env_module",
    "list_distributions",
    "looks_like_env_file",
    "register_distribution",
    "sample_toolsets",
    "tokenize_transcript",
    "transcript_spans",
]
