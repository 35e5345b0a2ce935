"""The ``config.stash`` keys a ``--hermes-conformance`` run keeps its state under (set by the plugin, read by the
collection nodes): here, below both, so neither imports the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

__all__ = ["OUTCOMES", "SETTINGS", "TARGETS"]

#: Resolved env file -> the ``::ClassName`` asked for (or None for every class in it).
TARGETS = pytest.StashKey[dict[Path, str | None]]()
#: The plugin's outcome collector (gathers every worker's outcomes for the report).
OUTCOMES = pytest.StashKey[Any]()
#: The :class:`~hermes_envs.conformance._runner.Settings` of the run.
SETTINGS = pytest.StashKey[object]()
