"""The suite's scheduling hint (tests/conftest.py LONGEST_FIRST) names tests that exist: a renamed long test
would silently lose its early start and could again set the finish time of `make test` on one worker."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import LONGEST_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_every_longest_first_entry_names_an_existing_test_file_or_function() -> None:
    for entry in LONGEST_FIRST:
        path, _, name = entry.partition("::")
        target = ROOT / path
        assert target.exists(), f"LONGEST_FIRST names {path}, which does not exist: update tests/conftest.py"
        if name:
            function = name.split("[", 1)[0]
            source = target.read_text(encoding="utf-8")
            assert re.search(rf"^(?:async )?def {re.escape(function)}\(", source, re.M), (
                f"LONGEST_FIRST names {entry}, but {path} has no test {function}: update tests/conftest.py"
            )


def test_the_longest_tests_are_marked_slow_so_they_start_first() -> None:
    """The hint orders slow tests only (a test without the mark keeps its collection place)."""
    for entry in LONGEST_FIRST:
        path, _, name = entry.partition("::")
        if not name:
            continue
        source = (ROOT / path).read_text(encoding="utf-8")
        function = name.split("[", 1)[0]
        before = source[: source.index(f"def {function}(")]
        marked_here = before.rstrip().rsplit("\n\n", 1)[-1]
        assert "pytest.mark.slow" in marked_here or "pytestmark = pytest.mark.slow" in source, entry
