"""The blind2 proofs register corpus tools (warehouse, station_kb) on the default registry: undo that after each
test, so tests elsewhere in the same session see the registry as they expect."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_envs.tools import registry


@pytest.fixture(autouse=True)
def _restore_default_registry() -> Iterator[None]:
    with registry.isolated():
        yield
