"""The test harness: fake model server, offline tokenizer and network guard, cassettes, snapshots, strategies.

Names are loaded on first access: the pytest plugin imports this package at every pytest start, and most of these
modules pull in aiohttp, vcrpy, syrupy or transformers, which a test session that does not use them should not pay for.

Import from here. The modules whose path the docs give (``offline``, ``cassettes``, ``recording``, ``snapshots``,
``strategies``, ``retries``, ``secret_rules``, ``fake_server``) stay importable by path; the ``_name`` modules are
the implementation and may change (the rule is in docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_envs._lazy import lazy_attributes

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
    "NetworkGuard": "hermes_envs.testing.offline",
    "BlockedAttempt": "hermes_envs.testing.offline",
    "NetworkBlockedError": "hermes_envs.testing.offline",
    "NetworkGuardPartialWarning": "hermes_envs.testing.offline",
    "loopback_namespace": "hermes_envs.testing._netns",
    "fast_retries": "hermes_envs.testing.retries",
    "disable_client_retries": "hermes_envs.testing.retries",
    # cassettes and snapshots
    "use_cassette": "hermes_envs.testing.cassettes",
    "load_cassette": "hermes_envs.testing.cassettes",
    "cassette_responder": "hermes_envs.testing.cassettes",
    "drift_summary": "hermes_envs.testing.cassettes",
    "CassetteError": "hermes_envs.testing.cassettes",
    "CassetteMissError": "hermes_envs.testing.cassettes",
    "CassetteSession": "hermes_envs.testing.cassettes",
    "Interaction": "hermes_envs.testing.cassettes",
    "ToolCassetteMissError": "hermes_envs.testing._tool_cassette",
    "Redactor": "hermes_envs.testing._redaction",
    "same_recording": "hermes_envs.testing._cassette_writing",
    "lint_paths": "hermes_envs.testing._secret_lint",
    "lint_text": "hermes_envs.testing._secret_lint",
    "SecretFinding": "hermes_envs.testing._secret_lint",
    "scan_secrets": "hermes_envs.testing.secret_rules",
    "redact_secrets": "hermes_envs.testing.secret_rules",
    "SnapshotKeptWarning": "hermes_envs.testing._replay_fixtures",
    "RewardSnapshotExtension": "hermes_envs.testing.snapshots",
    "TranscriptSnapshotExtension": "hermes_envs.testing.snapshots",
    "run_rollouts": "hermes_envs.testing.recording",
    "RolloutRun": "hermes_envs.testing.recording",
    "Provider": "hermes_envs.testing.recording",
    # wandb
    "spy_base_wandb_log": "hermes_envs.testing._wandb_spy",
}

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ below imports on first use
    from hermes_envs.testing._cassette_writing import same_recording
    from hermes_envs.testing._netns import loopback_namespace
    from hermes_envs.testing._redaction import Redactor
    from hermes_envs.testing._replay_fixtures import SnapshotKeptWarning
    from hermes_envs.testing._secret_lint import SecretFinding, lint_paths, lint_text
    from hermes_envs.testing._tool_cassette import ToolCassetteMissError
    from hermes_envs.testing._wandb_spy import spy_base_wandb_log
    from hermes_envs.testing.cassettes import (
        CassetteError,
        CassetteMissError,
        CassetteSession,
        Interaction,
        cassette_responder,
        drift_summary,
        load_cassette,
        use_cassette,
    )
    from hermes_envs.testing.fake_server import (
        Call,
        FakeOpenAIServer,
        Fault,
        Match,
        Script,
        ToolCall,
        Turn,
        args_from_schema,
        get_policy,
        load_script,
        parse_fault,
        register_policy,
    )
    from hermes_envs.testing.offline import (
        BlockedAttempt,
        NetworkBlockedError,
        NetworkGuard,
        NetworkGuardPartialWarning,
        block_network,
        load_offline_tokenizer,
        offline_environ,
        offline_mode,
        offline_tokenizer_path,
    )
    from hermes_envs.testing.recording import Provider, RolloutRun, run_rollouts
    from hermes_envs.testing.retries import disable_client_retries, fast_retries
    from hermes_envs.testing.secret_rules import redact_secrets, scan_secrets
    from hermes_envs.testing.snapshots import RewardSnapshotExtension, TranscriptSnapshotExtension

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
