"""Secret lint for cassettes: fail when a file holds a key-shaped string or the value of a ``*_API_KEY`` variable.

``hermes-envs lint-cassettes PATH...`` (exit 1 on findings), :func:`lint_paths` from Python; the pytest plugin runs
it on every cassette a session reads or writes. A finding names the file, the line, the column, the kind of secret
and a masked excerpt (the secret itself is never printed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CASSETTE_SUFFIXES",
    "KEY_PATTERNS",
    "SecretFinding",
    "lint_paths",
    "lint_text",
    "secret_values_from_env",
]

#: Shapes of provider credentials (name -> regex). Kept specific, so prose and ids do not trip them.
KEY_PATTERNS: dict[str, re.Pattern[str]] = {
    "OpenRouter key": re.compile(r"\bsk-or-v1-[0-9a-f]{32,}"),
    "Anthropic key": re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    "OpenAI-style key": re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "Groq key": re.compile(r"\bgsk_[A-Za-z0-9]{30,}"),
    "Replicate token": re.compile(r"\br8_[A-Za-z0-9]{30,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    "GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "JSON web token": re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    "bearer token": re.compile(r"(?i)\bbearer\s+(?!REDACTED\b)[A-Za-z0-9_\-\.=]{20,}"),
}

#: Environment variables whose current values must never appear in a cassette.
_SECRET_VARS = re.compile(r"(?:_API_KEY|_APIKEY|_TOKEN|_SECRET|_SECRET_KEY|_ACCESS_KEY)$")
_MIN_SECRET_LEN = 8

CASSETTE_SUFFIXES = (".yaml", ".yml", ".json")


def secret_values_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{value: VAR}`` for the set ``*_API_KEY`` (and ``*_TOKEN``, ``*_SECRET`` ...) variables long enough to
    be a credential (placeholders like ``x`` or ``EMPTY`` are skipped)."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name, value in env.items():
        if (
            _SECRET_VARS.search(name.upper())
            and value
            and len(value) >= _MIN_SECRET_LEN
            and value != "REDACTED"
        ):
            out.setdefault(value, name)
    return out


@dataclass(frozen=True)
class SecretFinding:
    """One secret-looking string in a file."""

    path: str
    line: int
    column: int
    kind: str
    excerpt: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}:{self.column}: cassette should hold no secrets; got a {self.kind} "
            f"({self.excerpt}). Fix: delete the cassette, re-record it (redaction is on by default), or add the "
            "header/field to the redaction list."
        )


def _mask(secret: str) -> str:
    return f"{secret[:4]}…{len(secret)} chars" if len(secret) > 8 else "…"


def lint_text(
    text: str, path: str = "<text>", secrets: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> list[SecretFinding]:
    """Findings in ``text``: key-shaped strings, ``secrets`` and the values of secret-named env variables."""
    known = {s: "given secret" for s in secrets if s and len(s) >= 6}
    known.update({v: f"value of ${k}" for v, k in secret_values_from_env(environ).items()})
    findings: list[SecretFinding] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        taken: list[tuple[int, int]] = []
        for value, kind in known.items():
            start = line.find(value)
            while start >= 0:
                findings.append(SecretFinding(path, lineno, start + 1, kind, _mask(value)))
                taken.append((start, start + len(value)))
                start = line.find(value, start + 1)
        for kind, pattern in KEY_PATTERNS.items():
            for m in pattern.finditer(line):
                if any(a <= m.start() < b for a, b in taken):
                    continue
                taken.append((m.start(), m.end()))
                findings.append(SecretFinding(path, lineno, m.start() + 1, kind, _mask(m.group(0))))
    return findings


def _files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in CASSETTE_SUFFIXES))
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(
                f"{p} should be a cassette file or folder; it does not exist. Fix: check the path."
            )
    return out


def lint_paths(
    paths: Iterable[str | Path], secrets: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> list[SecretFinding]:
    """Lint cassette files and folders (``.yaml``/``.yml``/``.json`` found recursively)."""
    secrets = list(secrets)
    findings: list[SecretFinding] = []
    for f in _files(paths):
        text = f.read_text(encoding="utf-8", errors="replace")
        findings.extend(lint_text(text, str(f), secrets, environ))
    return findings


def main(paths: list[str]) -> int:
    """``hermes-envs lint-cassettes``: print findings; 1 when there are any, 2 on a bad path, else 0."""
    import sys

    try:
        findings = lint_paths(paths)
    except FileNotFoundError as exc:
        print(f"hermes-envs lint-cassettes: {exc}", file=sys.stderr)
        return 2
    for f in findings:
        print(f)
    n = len(_files(paths))
    print(
        f"lint-cassettes: {len(findings)} secret(s) in {n} file(s)"
        if findings
        else f"lint-cassettes: {n} file(s) clean"
    )
    return 1 if findings else 0
