"""The public names of hermes_envs.env are pinned: a removal or rename is deliberate."""

from __future__ import annotations

import hermes_envs.env as env


def test_env_public_api() -> None:
    assert env.__all__ == [
        "HermesAgentBaseEnv",
        "HermesAgentEnvConfig",
        "list_distributions",
        "register_distribution",
        "sample_toolsets",
        "tokenize_transcript",
        "transcript_spans",
    ]
    assert all(hasattr(env, name) for name in env.__all__)
