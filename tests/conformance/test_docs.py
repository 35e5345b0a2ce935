"""docs/checks.md is generated from the check registry (each @check carries its why and fix) and must match it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import CHECK_REGISTRY, CHECKS, all_checks, check
from hermes_envs.conformance.docs import DOCS, main, render
from hermes_envs.errors import RegistryError


def test_every_check_says_why_it_matters_and_the_fix() -> None:
    # The "Why it matters" and "Fix" lines of docs/checks.md come from each @check(..., why=..., fix=...).
    bare = [c.id for c in all_checks() if not c.why.strip() or not c.fix.strip()]
    assert not bare, f"checks without a why or a fix: {bare}"


@pytest.mark.parametrize(
    "texts, missing",
    [({}, "why and fix"), ({"why": "it breaks training."}, "fix"), ({"why": " ", "fix": "do this."}, "why")],
)
def test_a_check_without_why_or_fix_is_refused_when_registered(texts: dict[str, str], missing: str) -> None:
    with CHECK_REGISTRY.isolated():
        with pytest.raises(
            RegistryError, match=rf"check HC998 .* should pass a non-empty {missing} .*Fix: add why="
        ):
            check("HC998", "scratch", "a scratch check", **texts)(lambda s: [])
        assert "HC998" not in CHECKS


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


def test_every_check_takes_the_session_typed_and_returns_findings() -> None:
    """No Any in check signatures (issue #24): each check is ``(s: EnvSession) -> list[Finding]``, which mypy checks
    at every call because @check hands the function back with its own signature."""
    import typing

    from hermes_envs.conformance._findings import Finding
    from hermes_envs.conformance._session import EnvSession

    for info in all_checks():
        hints = typing.get_type_hints(info.fn)
        params = [p for p in hints if p != "return"]
        assert [hints[p] for p in params] == [EnvSession], (info.id, hints)
        assert hints["return"] == list[Finding], (info.id, hints)
