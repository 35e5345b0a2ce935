from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from hermes_envs.tools import cleanup_all_sandboxes, configure_sandboxes
from hermes_envs.tools.sandbox import default_manager

BACKENDS = ["local"] + (["bwrap"] if shutil.which("bwrap") else [])


@pytest.fixture(autouse=True)
def _clean_sandboxes():
    """Every test starts with default settings and must leave no sandbox, process or folder behind."""
    configure_sandboxes()
    yield
    root = default_manager.root
    cleanup_all_sandboxes()
    configure_sandboxes()
    assert default_manager.active() == []
    assert default_manager.root is None
    assert root is None or not root.exists(), f"the sandbox root {root} was left behind"


@pytest.fixture
def scratch():
    """A temporary folder on the host (removed afterwards, unlike pytest's tmp_path which keeps the last runs)."""
    with tempfile.TemporaryDirectory(prefix="hermes-test-") as d:
        yield Path(d)


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Each backend available on this machine; tests using it configure the sandboxes for it."""
    configure_sandboxes(backend=request.param)
    return request.param
