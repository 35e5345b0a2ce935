"""The package facade: pinned public names, cheap imports, the plugin registered and light to load."""

from __future__ import annotations

import json
import subprocess
import sys

import hermes_envs

PUBLIC = [
    "AgentResult",
    "ConfigError",
    "EnvLoadError",
    "EnvRuntime",
    "HermesAgentBaseEnv",
    "HermesAgentEnvConfig",
    "HermesAgentLoop",
    "HermesEnvsError",
    "PathEscapeError",
    "SandboxError",
    "ScriptError",
    "ToolCallParser",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolRegistryError",
    "__version__",
    "final_response",
    "get_parser",
    "list_parsers",
    "register_parser",
    "registry",
    "tool",
    "tool_calls",
    "tool_results",
    "tools_used",
]


def test_public_names_are_pinned_and_resolve() -> None:
    assert hermes_envs.__all__ == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(hermes_envs, name) is not None


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_importing_the_package_and_the_plugin_is_light() -> None:
    heavy = {"atroposlib", "transformers", "wandb", "torch"}
    for code in (
        "import hermes_envs",
        "import hermes_envs.plugin",
        "import hermes_envs.parsers",
        "import hermes_envs.testing.fake_server",
    ):
        loaded = {m.split(".")[0] for m in _modules_after(code)}
        assert not loaded & heavy, f"{code!r} imported {sorted(loaded & heavy)}"


def test_plugin_is_registered_through_the_entry_point() -> None:
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="pytest11") if e.name == "hermes_envs"]
    assert ep.value == "hermes_envs.plugin"


def test_errors_inherit_the_builtin_a_user_would_catch() -> None:
    assert issubclass(hermes_envs.ScriptError, ValueError)
    assert issubclass(hermes_envs.PathEscapeError, PermissionError)
    assert issubclass(hermes_envs.EnvLoadError, ImportError)
    assert all(
        issubclass(e, hermes_envs.HermesEnvsError)
        for e in (hermes_envs.ConfigError, hermes_envs.SandboxError)
    )


def test_testing_facade_names_resolve() -> None:
    import hermes_envs.testing as testing

    for name in testing.__all__:
        assert getattr(testing, name) is not None, name
    assert {"FakeOpenAIServer", "offline_tokenizer_path", "use_cassette", "RewardSnapshotExtension"} <= set(
        testing.__all__
    )
