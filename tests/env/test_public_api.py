"""The public names of hermes_envs.env are pinned: a removal or rename is deliberate."""

from __future__ import annotations

import hermes_envs.env as env


def test_env_public_api() -> None:
    assert env.__all__ == [
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
    assert all(hasattr(env, name) for name in env.__all__)
