"""docs/ci.md and testing-your-env §8 say `--hermes-report` works under xdist: the report has every env, the check
titles and real timings, as a serial run's does. tests/docs/test_ci.py runs it (the parallel command's report
against the workflow step's serial one); this file checks the guides say so."""

from __future__ import annotations

from .test_snippets import ROOT


def test_the_guides_agree_about_the_report_under_xdist() -> None:
    for doc in ("docs/ci.md", "docs/testing-your-env.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert "not filled in under xdist" not in text
        assert "--hermes-report" in text and "under xdist too" in text, doc
