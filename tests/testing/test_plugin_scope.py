"""The plugin changes nothing process-wide: an unrelated project's pytest session with hermes-envs installed sees
no hermes environment variable, and a test that uses the plugin's fixtures gets the offline tool backends only for
its own span."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

_TESTS = """
import os
import subprocess
import sys

import pytest


def test_plain():
    assert not [k for k in os.environ if k.startswith("HERMES_")]
    child = subprocess.run([sys.executable, "-c", "import os; print(sorted(k for k in os.environ if k.startswith('HERMES_')))"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "[]"


@pytest.mark.fake_openai(script=[{"content": "hi"}])
def test_uses_the_fixture(fake_openai):
    assert os.environ["HERMES_TOOL_BACKENDS"] == "fake"
    assert os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] == "1"


def test_plain_again():
    assert "HERMES_TOOL_BACKENDS" not in os.environ
    assert "TRANSFORMERS_NO_ADVISORY_WARNINGS" not in os.environ
"""


def test_an_unrelated_session_sees_no_hermes_variable(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("HERMES_TOOL_BACKENDS", raising=False)
    monkeypatch.delenv("TRANSFORMERS_NO_ADVISORY_WARNINGS", raising=False)
    monkeypatch.delenv(
        "HERMES_TESTS_CORPUS_CACHE", raising=False
    )  # our own suite's shared cache, not the plugin's
    pytester.makepyfile(test_unrelated=_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_an_authors_own_setting_wins(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_TOOL_BACKENDS", "real")
    pytester.makepyfile(
        test_own="""
import os, pytest

@pytest.mark.fake_openai(script=[{"content": "hi"}])
def test_kept(fake_openai):
    assert os.environ["HERMES_TOOL_BACKENDS"] == "real"
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
