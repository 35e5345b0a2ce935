"""The code snippets of docs/fake-server.md marked as tested run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "fake-server.md"
MARK = "# tested by tests/fake_server/test_docs.py"


def _snippets() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    return [b for b in blocks if b.startswith(MARK)]


def test_the_doc_has_tested_snippets():
    assert _snippets(), f"no ```python block of {DOC.name} starts with {MARK!r}"


@pytest.mark.parametrize("snippet", _snippets(), ids=lambda s: s.splitlines()[1][:40])
def test_doc_snippet_runs(snippet):
    exec(compile(snippet, str(DOC), "exec"), {"__name__": "__doc_snippet__"})
