"""Fixtures of the blind3 corpus proofs; puts blind3_helpers on the path (tests run with --import-mode=importlib)."""

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

    context = ToolContext(f"blind3-{uuid.uuid4()}")
    yield context
    context.cleanup()
