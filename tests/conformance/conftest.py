"""Corpus runs are shared by every xdist worker of a session (see corpus.SHARED_CACHE_VARIABLE)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _shared_corpus_cache(shared_corpus_cache: None) -> None:
    """Every test here may read the corpus outcomes: the shared cache (tests/conftest.py) is set for all of them."""
