"""The suite's own hygiene: a pytester run must not leave a module half-gone for later tests of the same xdist
worker (tests/conftest.py imports such modules first)."""

from __future__ import annotations

import importlib
import importlib.util

import pytest
from _pytest.pytester import SysModulesSnapshot  # what pytester restores at the end of each test that uses it


def test_datasets_imports_again_after_a_pytester_test_that_imported_it_first() -> None:
    """pytester drops the modules first imported during its test; `datasets` cannot be imported again while
    pyarrow (imported before) keeps its extension types, so tests/test_seams.py failed in CI after such a test."""
    if importlib.util.find_spec("datasets") is None:  # (importorskip would import it: nothing left to test)
        pytest.skip("datasets is not installed")
    importlib.import_module("pyarrow")
    snapshot = SysModulesSnapshot()
    importlib.import_module("datasets.config")  # as an env's import in an inner run
    snapshot.restore()
    assert importlib.import_module("datasets.config").HF_HUB_OFFLINE in (True, False)
