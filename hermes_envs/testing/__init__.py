"""The test harness: fake model server, offline tokenizer and network guard, cassettes, snapshots, strategies.

Names are loaded on first access: the pytest plugin imports this package at every pytest start, and most of these
modules pull in aiohttp, vcrpy, syrupy or transformers, which a test session that does not use them should not pay for.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    # fake model server
    "FakeOpenAIServer": "hermes_envs.testing.fake_server",
    "Script": "hermes_envs.testing.fake_server",
    "Turn": "hermes_envs.testing.fake_server",
    "ToolCall": "hermes_envs.testing.fake_server",
    "Match": "hermes_envs.testing.fake_server",
    "Fault": "hermes_envs.testing.fake_server",
    "Call": "hermes_envs.testing.fake_server",
    "load_script": "hermes_envs.testing.fake_server",
    "get_policy": "hermes_envs.testing.fake_server",
    "register_policy": "hermes_envs.testing.fake_server",
    "args_from_schema": "hermes_envs.testing.fake_server",
    "parse_fault": "hermes_envs.testing.fake_server",
    # offline running
    "offline_tokenizer_path": "hermes_envs.testing.offline",
    "load_offline_tokenizer": "hermes_envs.testing.offline",
    "offline_environ": "hermes_envs.testing.offline",
    "offline_mode": "hermes_envs.testing.offline",
    "block_network": "hermes_envs.testing.offline",
    "NetworkBlockedError": "hermes_envs.testing.offline",
    "NetworkGuardPartialWarning": "hermes_envs.testing.offline",
    "loopback_namespace": "hermes_envs.testing.netns",
    "fast_retries": "hermes_envs.testing.retries",
    "disable_client_retries": "hermes_envs.testing.retries",
    # cassettes and snapshots
    "use_cassette": "hermes_envs.testing.cassettes",
    "load_cassette": "hermes_envs.testing.cassettes",
    "cassette_responder": "hermes_envs.testing.cassettes",
    "drift_summary": "hermes_envs.testing.cassettes",
    "CassetteError": "hermes_envs.testing.cassettes",
    "CassetteMissError": "hermes_envs.testing.cassettes",
    "same_recording": "hermes_envs.testing.cassette_writing",
    "lint_paths": "hermes_envs.testing.secret_lint",
    "lint_text": "hermes_envs.testing.secret_lint",
    "scan_secrets": "hermes_envs.testing.secret_rules",
    "redact_secrets": "hermes_envs.testing.secret_rules",
    "SnapshotKeptWarning": "hermes_envs.testing.replay_fixtures",
    "RewardSnapshotExtension": "hermes_envs.testing.snapshots",
    "TranscriptSnapshotExtension": "hermes_envs.testing.snapshots",
    "run_rollouts": "hermes_envs.testing.recording",
    "RolloutRun": "hermes_envs.testing.recording",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_envs.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
