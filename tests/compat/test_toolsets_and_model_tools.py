"""Upstream's top-level ``toolsets`` and ``model_tools`` over our registry: a toolset made with
``create_custom_toolset`` is one an env can enable, and ``handle_function_call`` runs a tool as upstream's does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import environments  # noqa: F401  (installs the stand-ins, as an upstream env file's first import does)

# isort: split
import model_tools
import toolsets

from hermes_envs.tools import registry

ROOT = Path(__file__).resolve().parents[2]


def test_a_custom_toolset_resolves_and_is_offered_when_enabled(monkeypatch) -> None:
    # the toolset is defined for this test only: left behind, it showed up in later tests' "Available toolsets"
    monkeypatch.setattr(toolsets, "TOOLSETS", dict(toolsets.TOOLSETS))
    with registry.isolated():
        _custom_toolset_resolves()
    assert "shell_and_files" not in registry.toolsets()


def _custom_toolset_resolves() -> None:
    toolsets.create_custom_toolset(
        "shell_and_files", "terminal plus file tools", tools=["read_file"], includes=["terminal"]
    )
    resolved = toolsets.resolve_toolset("shell_and_files")
    assert "read_file" in resolved and "terminal" in resolved and resolved == sorted(resolved)
    assert toolsets.validate_toolset("shell_and_files") and not toolsets.validate_toolset("nope")
    assert toolsets.resolve_toolset("nope") == []
    _schemas, names = registry.resolve(["shell_and_files"])
    assert {"read_file", "terminal"} <= names
    info = toolsets.get_toolset_info("shell_and_files")
    assert info is not None and info["includes"] == ["terminal"] and info["direct_tools"] == ["read_file"]
    names_of = [d["function"]["name"] for d in model_tools.get_tool_definitions(["shell_and_files"])]
    assert set(names_of) == names


def test_handle_function_call_runs_a_tool_and_reports_failures_as_results() -> None:
    out = json.loads(model_tools.handle_function_call("terminal", {"command": "echo hi"}, task_id="mt1"))
    assert out["output"].strip() == "hi" and out["exit_code"] == 0
    assert "Unknown tool" in json.loads(model_tools.handle_function_call("no_such_tool", {}))["error"]
    failed = json.loads(model_tools.handle_function_call("read_file", {"path": "missing.txt"}, task_id="mt1"))
    assert failed["error"].startswith("Tool execution failed:")
    from hermes_envs.tools import cleanup_sandbox

    cleanup_sandbox("mt1")


def test_a_users_own_toolsets_module_wins(tmp_path: Path) -> None:
    (tmp_path / "toolsets.py").write_text("OWNER = 'user'\n", encoding="utf-8")
    code = "import environments, toolsets; print(getattr(toolsets, 'OWNER', 'stand-in'))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "user"
