"""Fixtures of the blind5 corpus proofs; puts blind5_helpers on the path (tests run with --import-mode=importlib)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def ctx() -> Iterator[Any]:
    """A ToolContext on a fresh sandbox, cleaned up after the test."""
    from hermes_envs.tools import ToolContext

    context = ToolContext(f"blind5-{uuid.uuid4()}")
    yield context
    context.cleanup()


@pytest.fixture(autouse=True)
def _isolated_tool_registry() -> Iterator[None]:
    """Corpus envs register their own toolsets in setup(); take them off the default registry after each test."""
    from hermes_envs.tools import registry

    with registry.isolated():
        yield
