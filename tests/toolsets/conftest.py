"""Shared by the toolset tests: every test runs with the fake backends and forgets backend choices after."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from hermes_envs.tools import cleanup_sandbox, registry
from hermes_envs.tools.toolsets import bind_model_endpoint, slots


@pytest.fixture(autouse=True)
def fake_backends(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HERMES_TOOL_BACKENDS", "fake")
    for name in ("HERMES_WEB_CORPUS", "HERMES_WEB_BACKEND", "HERMES_BROWSER_BACKEND", "HERMES_TOOL_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    yield
    for s in slots().values():
        s.reset()
    bind_model_endpoint(None)


@pytest.fixture
def task_id() -> Iterator[str]:
    task = f"toolsets-{uuid.uuid4().hex[:8]}"
    yield task
    cleanup_sandbox(task)


def call(name: str, task: str, /, **arguments: object) -> dict:
    """Dispatch tool ``name`` through the default registry, as the agent loop does; the parsed JSON result."""
    import json

    return json.loads(registry.dispatch(name, dict(arguments), task))
