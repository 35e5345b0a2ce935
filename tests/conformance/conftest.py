"""Corpus runs are shared by every xdist worker of a session (see corpus.SHARED_CACHE)."""

from __future__ import annotations

import pytest

from . import corpus


@pytest.fixture(scope="session", autouse=True)
def _shared_corpus_cache(tmp_path_factory: pytest.TempPathFactory):
    # Under xdist each worker's basetemp is <session basetemp>/popen-gwN: its parent is the session's own folder,
    # fresh for every run (so nothing is reused from an earlier session).
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base
    corpus.SHARED_CACHE = shared / "hermes-corpus-cache"
    yield
    corpus.SHARED_CACHE = None
