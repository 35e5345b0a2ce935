"""The secret lint: key shapes and *_API_KEY values in cassettes fail, with the file and the line."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from hermes_envs.cli import main as cli_main
from hermes_envs.testing import lint_paths, lint_text

_RNG = random.Random(11)


def _r(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n - 1)) + "7"


# Built at run time (seeded): random enough to be credentials, and no key-shaped literal in this file.
SHAPES = {
    "OpenAI API key": "sk-proj-" + _r(32),
    "OpenRouter API key": "sk-or-v1-" + _r(64, "0123456789abcdef"),
    "Anthropic API key": "sk-ant-api03-" + _r(40),
    "Hugging Face token": "hf_" + _r(34),
    "Groq API key": "gsk_" + _r(52),
    "Google API key": "AIza" + _r(35),
    "GitHub token": "ghp_" + _r(36),
    "AWS access key id": "AKIA" + _r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "JSON web token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer token": "Bearer " + _r(32),
}


@pytest.mark.parametrize(("kind", "secret"), list(SHAPES.items()))
def test_each_key_shape_is_found_with_its_line(tmp_path: Path, kind: str, secret: str) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_text(f"interactions:\n- request:\n    x: '{secret}'\n")
    findings = lint_paths([cassette], environ={})
    assert [(f.line, f.kind) for f in findings] == [(3, kind)]
    assert str(cassette) in str(findings[0]) and ":3:" in str(findings[0])
    assert secret not in str(findings[0])  # the message never prints the secret


def test_values_of_api_key_variables_are_found(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    cassette = tmp_path / "sub" / "c.yml"
    cassette.write_text("a: 1\nb: 'value is plain-but-secret-42'\n")
    findings = lint_paths([tmp_path], environ={"ACME_API_KEY": "plain-but-secret-42", "OTHER_API_KEY": "x"})
    assert [(f.line, f.kind) for f in findings] == [(2, "value of $ACME_API_KEY")]


def test_placeholders_and_ordinary_text_pass() -> None:
    text = "authorization:\n- Bearer REDACTED\nbody: 'sk-short; risk-assessment-of-the-plan; call_abc123'\n"
    assert lint_text(text, environ={}) == []


def test_cli_exits_1_and_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("ok: 1\nkey: " + SHAPES["OpenAI API key"] + "\n")
    (tmp_path / "good.yaml").write_text("ok: 1\n")
    assert cli_main(["lint-cassettes", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2:6: cassette should hold no secrets; got a OpenAI API key" in out
    assert cli_main(["lint-cassettes", str(tmp_path / "good.yaml")]) == 0
    assert cli_main(["lint-cassettes", str(tmp_path / "missing")]) == 2


def test_replay_refuses_a_cassette_with_a_secret(tmp_path: Path) -> None:
    from hermes_envs.testing.cassettes import CassetteError, use_cassette

    cassette = tmp_path / "c.yaml"
    cassette.write_text("version: 1\ninteractions: []\nnote: " + SHAPES["Groq API key"] + "\n")
    with pytest.raises(CassetteError, match=r"c\.yaml:3:7: .*Groq API key"):
        with use_cassette(cassette):
            pass


def test_the_planted_corpus_is_found_and_prose_is_not(corpus) -> None:
    """33 fake secrets in cassette forms (plain, named, base64, YAML-escaped, YAML-split, SSE-split,
    percent-encoded) are all found; 27 credential-like prose strings are not flagged (before: 15/33 and 6/27)."""
    prose, secrets = corpus.prose, corpus.secrets
    missed = [p.name for p in secrets() if not lint_text(p.text, environ={})]
    flagged = [t for t in prose() if lint_text(t, environ={})]
    assert (missed, flagged) == ([], [])
    assert len(secrets()) >= 30 and len(prose()) >= 23


def test_the_conformance_check_uses_the_same_table(corpus) -> None:
    prose, secrets = corpus.prose, corpus.secrets
    from hermes_envs.conformance._secrets import find_secrets

    found = [p.name for p in secrets() if find_secrets(p.text)]
    assert len(found) >= 30 and not [t for t in prose() if find_secrets(t)]


def test_a_missing_folder_among_several_is_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hermes-envs lint-cassettes environments/cassettes tests/` on a project that has not recorded yet."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "c.yaml").write_text("ok: 1\n")
    missing = tmp_path / "environments" / "cassettes"
    assert cli_main(["lint-cassettes", str(missing), str(tmp_path / "tests")]) == 0
    captured = capsys.readouterr()
    assert f"note: {missing} does not exist" in captured.err and "1 file(s) clean" in captured.out
    assert cli_main(["lint-cassettes", str(missing), str(tmp_path / "nope")]) == 2
