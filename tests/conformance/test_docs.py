"""docs/checks.md is generated from the registry and the catalogue, and must be in sync with both."""

from __future__ import annotations

from hermes_envs.conformance import all_checks
from hermes_envs.conformance.catalogue import CATALOGUE
from hermes_envs.conformance.docs import DOCS, render


def test_every_check_is_in_the_catalogue_and_nothing_else() -> None:
    assert sorted(CATALOGUE) == [c.id for c in all_checks()]


def test_every_check_says_what_it_catches() -> None:
    assert all(len(c.catches) > 20 for c in all_checks())


def test_docs_checks_md_is_up_to_date() -> None:
    assert DOCS.read_text(encoding="utf-8") == render(), (
        "docs/checks.md is out of date: run `python -m hermes_envs.conformance.docs`"
    )
