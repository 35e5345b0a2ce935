"""docs/checks.md is generated from the registry and the catalogue, and must be in sync with both."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import all_checks
from hermes_envs.conformance._catalogue import CATALOGUE
from hermes_envs.conformance.docs import DOCS, main, render


def test_every_check_is_in_the_catalogue_and_nothing_else() -> None:
    assert sorted(CATALOGUE) == [c.id for c in all_checks()]


def test_every_check_says_what_it_catches() -> None:
    # The docstring is the "what it catches" column of docs/checks.md: a sentence naming a bug, not a stub.
    vague = [
        c.id
        for c in all_checks()
        if len(c.catches.split()) < 6 or not c.catches.rstrip().endswith((".", ")"))
    ]
    assert not vague, f"checks whose docstring does not say which bug they catch in a sentence: {vague}"


def test_docs_checks_md_is_up_to_date() -> None:
    assert DOCS.read_text(encoding="utf-8") == render(), (
        "docs/checks.md is out of date: run `python -m hermes_envs.conformance.docs`"
    )


def test_the_generator_writes_where_told_and_treats_help_as_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "where to write it" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # it once wrote the page into a file named "--help"
    assert main([str(tmp_path / "checks.md")]) == 0
    assert (tmp_path / "checks.md").read_text(encoding="utf-8") == render()
