"""The facade's names are pinned and importing it stays light (no atroposlib / transformers / openai)."""

from __future__ import annotations

import subprocess
import sys

import hermes_envs.testing.fake_server as fs


def test_exported_names_are_pinned():
    assert fs.__all__ == sorted(fs.__all__)
    assert set(fs.__all__) == {
        "FAULT_KINDS",
        "POLICIES",
        "Call",
        "FakeOpenAIServer",
        "Fault",
        "Match",
        "Script",
        "ToolCall",
        "Turn",
        "args_from_schema",
        "get_policy",
        "load_script",
        "parse_fault",
        "register_policy",
    }
    for name in fs.__all__:
        assert getattr(fs, name) is not None


def test_import_is_light():
    code = (
        "import sys, hermes_envs.testing.fake_server, hermes_envs.testing._fixtures; "
        "print(sorted(m for m in ('atroposlib', 'transformers', 'openai', 'aiohttp', 'respx') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
