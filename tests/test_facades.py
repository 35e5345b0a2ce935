"""Every package's public names are pinned: a name added or dropped from a facade's ``__all__`` is a visible change.

Reading ``__all__`` of the lazy facades (testing, conformance) imports nothing heavy. Their ``TYPE_CHECKING`` block
must name every lazy attribute, so type checkers and IDEs see what ``__getattr__`` serves at run time.
"""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

PINNED: dict[str, list[str]] = {
    "hermes_envs.viewer": [
        "Group",
        "GroupFileError",
        "Rollout",
        "ViewFinding",
        "default_output",
        "find_problems",
        "load_groups",
        "render_html",
        "write_view",
    ],
    "hermes_envs.testing": [
        "BlockedAttempt",
        "Call",
        "CassetteError",
        "CassetteMissError",
        "CassetteSession",
        "FakeOpenAIServer",
        "Fault",
        "Interaction",
        "Match",
        "NetworkBlockedError",
        "NetworkGuard",
        "NetworkGuardPartialWarning",
        "Provider",
        "Redactor",
        "RewardSnapshotExtension",
        "RolloutRun",
        "Script",
        "SecretFinding",
        "SnapshotKeptWarning",
        "ToolCall",
        "ToolCassetteMissError",
        "TranscriptSnapshotExtension",
        "Turn",
        "args_from_schema",
        "block_network",
        "cassette_responder",
        "disable_client_retries",
        "drift_summary",
        "fast_retries",
        "get_policy",
        "lint_paths",
        "lint_text",
        "load_cassette",
        "load_offline_tokenizer",
        "load_script",
        "loopback_namespace",
        "offline_environ",
        "offline_mode",
        "offline_tokenizer_path",
        "parse_fault",
        "redact_secrets",
        "register_policy",
        "run_rollouts",
        "same_recording",
        "scan_secrets",
        "spy_base_wandb_log",
        "use_cassette",
    ],
    "hermes_envs.conformance": [
        "CHECKS",
        "CHECK_REGISTRY",
        "CheckInfo",
        "ConformanceReport",
        "EnvSession",
        "Finding",
        "Outcome",
        "Settings",
        "Severity",
        "Status",
        "all_checks",
        "check",
        "run_conformance",
    ],
    "hermes_envs.tools.backends": [
        "CommandResult",
        "SandboxBackend",
        "available_backends",
        "backends",
        "register_backend",
    ],
    "hermes_envs.tools.toolsets": [
        "FAKE",
        "Corpus",
        "JsonlToolRecorder",
        "MemoryToolRecorder",
        "ModelEndpoint",
        "Page",
        "ReplayMissError",
        "ToolBackendError",
        "ToolRecorder",
        "ToolTimeoutError",
        "bind_env_server",
        "bind_model_endpoint",
        "bound_result",
        "browser_session",
        "close_browser",
        "load_corpus",
        "memory_entries",
        "offline_requested",
        "recorded_call",
        "register_toolsets",
        "set_limits",
        "set_tool_recorder",
        "slots",
        "timeout_for",
        "todo_list",
        "tool_recorder",
        "use_backend",
        "use_corpus",
        "web_backend",
    ],
}


@pytest.mark.parametrize("package", sorted(PINNED))
def test_public_names_are_pinned(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__ == PINNED[package], (
        f"{package}.__all__ should be the pinned list; got {module.__all__!r}. Fix: if the change is meant, "
        "update PINNED in tests/test_facades.py (and the docs)."
    )


@pytest.mark.parametrize("package", ["hermes_envs.viewer", "hermes_envs.tools.backends"])
def test_eager_facade_names_resolve(package: str) -> None:
    module = importlib.import_module(package)
    assert all(getattr(module, name, None) is not None for name in module.__all__)


def _type_checking_names(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    names |= {a.asname or a.name for a in stmt.names}
    return names


@pytest.mark.parametrize("package", ["hermes_envs.testing", "hermes_envs.conformance"])
def test_lazy_facade_is_visible_to_type_checkers(package: str) -> None:
    module = importlib.import_module(package)
    seen = _type_checking_names(inspect.getsource(module))
    missing = sorted(set(module.__all__) - seen)
    assert not missing, (
        f"{package}'s TYPE_CHECKING block should import every lazy name; got {missing} missing. "
        "Fix: add them to the block."
    )


@pytest.mark.parametrize(
    "package",
    [
        "hermes_envs",
        "hermes_envs.agent",
        "hermes_envs.env",
        "hermes_envs.tools",
        "hermes_envs.tools.backends",
        "hermes_envs.viewer",
        "hermes_envs.compat",
    ],
)
def test_facade_names_are_the_home_objects(package: str) -> None:
    """``from package import X`` gives the very object X's defining module holds (not None, not a stale copy)."""
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        assert obj is not None, name
        home, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
        if (
            isinstance(home, str)
            and home.startswith("hermes_envs")
            and isinstance(qual, str)
            and qual
            and "." not in qual
        ):
            assert getattr(importlib.import_module(home), qual, None) is obj, (
                f"{package}.{name} vs {home}.{qual}"
            )
