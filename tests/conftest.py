"""Scheduling of the suite under pytest-xdist: the long tests start first, and work is handed out a test or two at
a time, so the last minute of `make test` is not one worker finishing a 30 s test while the other idles.

Why both: xdist's default `load` scheduling sends each worker a quarter of its share as one consecutive chunk at
the start, then more in shrinking chunks, in collection order. The end-to-end tests (demo, docs commands, packaging)
sit in the middle of the alphabet, so one of them often starts near the end and sets the finish time. Moving the
slow tests first alone would put them all in the first worker's first chunk; handing out tests one or two at a time
(``--maxschedchunk 1``, unless given on the command line) lets whichever worker is free take the next one: with the
longest first, that is the longest-processing-time-first rule. Nothing here changes what a test asserts or whether
it runs; without xdist the order change is harmless (each test sets up what it needs).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (derandomize), so a submission lands or not on its own merits,
# not on which rare input a random run happened to draw; HYPOTHESIS_RANDOM=1 explores afresh (and reports a seed
# to pin the case it finds as an explicit test).
settings.register_profile("hermes-envs-ci", derandomize=True, database=None)
settings.register_profile("hermes-envs-explore")
settings.load_profile("hermes-envs-explore" if os.environ.get("HYPOTHESIS_RANDOM") else "hermes-envs-ci")

# pytester restores sys.modules after each in-process run, dropping the modules first imported inside it, and
# `datasets` registers pyarrow extension types at import that a second import refuses ("ArrowKeyError: A type
# extension with name datasets.features.features.Array2DExtensionType already defined"): a later test importing it
# in the same xdist worker failed (tests/test_seams.py, in CI). Imported once here, no inner run imports it first.
with contextlib.suppress(ImportError):
    import datasets  # noqa: F401

# This suite runs every tool family on its offline fake backend, in tests that use no hermes fixture too (the
# plugin itself sets this only around tests that use its fixtures or markers).
os.environ.setdefault("HERMES_TOOL_BACKENDS", "fake")

#: The longest end-to-end tests (several pytest / python sessions each: 18-86 s of CPU in a full run, measured per
#: test as the CPU of the test's process and its children), by node id prefix: they start before the other slow
#: tests, the longest first. xdist gives each worker two tests to start with (the first two to one worker, the
#: next two to the other), so the first four are paired to balance (85 + 43 s, 62 + 50 s of CPU), and the two
#: newcomer tests start on one worker, which then builds their module's fresh venv once, not once per worker.
#: A hint for ordering only: a renamed or removed test just loses its place at the front, and a new long test
#: marked ``slow`` still runs early.
LONGEST_FIRST = (
    "tests/docs/test_ci.py::test_workflow_step_and_parallel_command_pass_and_report_alike",
    "tests/cli/test_demo.py::test_demo_prints_a_short_summary_and_keeps_the_details",
    "tests/packaging/test_newcomer_pass.py::test_ci_python_m_pytest_commands_pass_on_an_upstream_layout",
    "tests/packaging/test_newcomer_pass.py::test_readme_quickstart_process_run_and_hook_command",
    "tests/docs/test_ci.py::test_hook_passes_on_good_envs_and_blocks_a_broken_one",
    "tests/packaging/",
    "tests/docs/test_snippets.py::test_python_snippets_run[docs/testing-your-env.md]",
    "tests/examples/test_quickstart.py",
    "tests/conformance/test_config.py::test_plugin_hermes_set",
    "tests/docs/",
    "tests/examples/",
)


def _rank(item: pytest.Item) -> int:
    """0, 1, ... for the slow tests of LONGEST_FIRST, then the other slow tests, then the rest."""
    if not item.get_closest_marker("slow"):
        return len(LONGEST_FIRST) + 1
    return next((r for r, p in enumerate(LONGEST_FIRST) if item.nodeid.startswith(p)), len(LONGEST_FIRST))


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "dist", "no") == "load" and getattr(config.option, "maxschedchunk", 0) is None:
        config.option.maxschedchunk = 1


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A stable sort by rank, after other plugins' reordering."""
    items.sort(key=_rank)


@pytest.fixture(scope="session")
def shared_corpus_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Corpus runs shared by every xdist worker of the session (tests/conformance/corpus.py SHARED_CACHE_VARIABLE):
    used by every test of tests/conformance, and by any other test reading the corpus outcomes."""
    # Under xdist each worker's basetemp is <session basetemp>/popen-gwN: its parent is the session's own folder,
    # fresh for every run (so nothing is reused from an earlier session).
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HERMES_TESTS_CORPUS_CACHE", str(shared / "hermes-corpus-cache"))
        yield
