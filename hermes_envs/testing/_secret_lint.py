"""Secret lint for cassettes: fail when a file holds a key-shaped string or the value of a ``*_API_KEY`` variable.

``hermes-envs lint-cassettes PATH...`` (exit 1 on findings), :func:`lint_paths` from Python; the pytest plugin runs
it on every cassette a session reads or writes. A finding names the file, the line, the column, the kind of secret
and a masked excerpt (the secret itself is never printed).

Shapes come from :mod:`hermes_envs.testing.secret_rules` (the one table, shared with redaction and HC901). Besides
each line as written, the lint reads the file as YAML and scans every string value as YAML decodes it (escapes
such as ``\x2d`` undone, a double-quoted scalar split over lines joined), JSON held in a string, and SSE events
with their streamed pieces joined (a key split across two chunks is found once they are put together).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_envs.errors import MissingFileError
from hermes_envs.testing.secret_rules import encoded_forms, looks_real, scan, secret_name, sse_events

__all__ = ["CASSETTE_SUFFIXES", "SecretFinding", "lint_paths", "lint_text", "main", "secret_values_from_env"]

#: Environment variables whose current values must never appear in a cassette.
_SECRET_VARS = re.compile(
    r"(?:_API_KEY|_APIKEY|_TOKEN|_SECRET|_SECRET_KEY|_ACCESS_KEY|PASSWORD|_PASSWD|_PWD)$"
)
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
    """Findings in ``text``: key-shaped strings, ``secrets`` and the values of secret-named env variables, as
    written and in decoded forms (YAML scalars, JSON in strings, joined SSE streams, base64)."""
    known = {s: "given secret" for s in secrets if s and len(s) >= 6}
    known.update({v: f"value of ${k}" for v, k in secret_values_from_env(environ).items()})
    for value, kind in list(known.items()):  # base64 (at any offset) and percent-encoded forms
        for form in encoded_forms(value):
            known.setdefault(form, f"{kind}, encoded")
    findings: list[SecretFinding] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        taken: list[tuple[int, int]] = []
        for value, kind in known.items():
            start = line.find(value)
            while start >= 0:
                findings.append(SecretFinding(path, lineno, start + 1, kind, _mask(value)))
                taken.append((start, start + len(value)))
                seen.add(value)
                start = line.find(value, start + 1)
        for hit in scan(line):
            if any(a <= hit.start < b for a, b in taken):
                continue
            seen.add(hit.value)
            findings.append(SecretFinding(path, lineno, hit.start + 1, hit.kind, _mask(hit.value)))
    named: list[tuple[int, int, str, str]] = []
    for lineno, column, value in _decoded_strings(text, named):
        for secret, kind in known.items():
            if secret in value and secret not in seen:
                seen.add(secret)
                findings.append(SecretFinding(path, lineno, column, f"{kind} (decoded)", _mask(secret)))
        for hit in scan(value):
            if hit.value in seen or any(hit.value in s or s in hit.value for s in seen):
                continue
            seen.add(hit.value)
            findings.append(SecretFinding(path, lineno, column, f"{hit.kind} (decoded)", _mask(hit.value)))
    for lineno, column, name, value in named:
        if value in seen or any(value in s or s in value for s in seen):
            continue
        if len(value) >= 16 and looks_real(value, "keyword"):
            seen.add(value)
            findings.append(
                SecretFinding(path, lineno, column, f"value of a field named {name!r}", _mask(value))
            )
    return findings


def _decoded_strings(text: str, named: list[tuple[int, int, str, str]]) -> list[tuple[int, int, str]]:
    """``(line, column, value)`` of every string in ``text`` read as YAML (and JSON inside strings), plus each
    SSE stream's joined pieces (any SSE spelling). Values held under a credential's name (a header such as
    ``X-Portkey-Api-Key``, a ``token`` field, an ``accessKey`` query parameter) go to ``named`` as
    ``(line, column, name, value)``. Empty when ``text`` is not YAML."""
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return []
    out: list[tuple[int, int, str]] = []

    def strings_of(node: Any) -> list[str]:
        if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, yaml.SequenceNode):
            return [v for child in node.value for v in strings_of(child)]
        return []

    def walk(node: Any) -> None:
        if isinstance(node, yaml.ScalarNode):
            if isinstance(node.value, str) and node.tag.endswith(":str"):
                where = (node.start_mark.line + 1, node.start_mark.column + 1)
                out.append((*where, node.value))
                out.extend((*where, v) for v in _json_strings(node.value, named, where))
                named.extend((*where, k, v) for k, v in _query_pairs(node.value))
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                walk(child)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(key)
                walk(value)
                if not isinstance(key, yaml.ScalarNode):
                    continue
                if secret_name(str(key.value)):
                    where = (value.start_mark.line + 1, value.start_mark.column + 1)
                    named.extend((*where, str(key.value), v) for v in strings_of(value))
                if key.value == "sse" and isinstance(value, yaml.SequenceNode):
                    where = (value.start_mark.line + 1, value.start_mark.column + 1)
                    events = yaml.safe_load(yaml.serialize(value)) or []
                    events = [_sse_value(e) for e in events]
                    out.extend((*where, v) for v in joined_stream(events))

    if root is not None:
        walk(root)
    return out


def _sse_value(event: Any) -> Any:
    """A stored SSE event as JSON: a dict/list as is, a raw block (``event:`` + ``data:``, ``data:{...}``) parsed."""
    if isinstance(event, str):
        parsed = sse_events(event)
        if parsed and parsed[0][1] is not None:
            return parsed[0][1]
    return event


def _query_pairs(text: str) -> list[tuple[str, str]]:
    """``(name, value)`` of the secret-named query parameters of a URL in ``text`` (``?accessKey=...``)."""
    if "?" not in text or "=" not in text or "://" not in text:
        return []
    from urllib.parse import parse_qsl, urlsplit

    try:
        query = urlsplit(text.strip()).query
    except ValueError:
        return []
    return [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if secret_name(k)]


def _json_strings(
    text: str, named: list[tuple[int, int, str, str]] | None = None, where: tuple[int, int] = (0, 0)
) -> list[str]:
    stripped = text.strip()
    events = sse_events(stripped) if stripped[:1] not in ("{", "[") else None
    if events is not None:
        return joined_stream([value for _, value in events])
    if stripped[:1] not in ("{", "["):
        return []
    try:
        value = json.loads(stripped)
    except ValueError:
        return []
    strings: list[str] = []

    def walk(v: Any, key: str = "") -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, str):
                    strings.append(f"{k}: {x}")
                    if named is not None and secret_name(str(k)):
                        named.append((*where, str(k), x))
                    strings.extend(_json_strings(x, named, where))
                walk(x, str(k))
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif isinstance(v, str):
            strings.append(v)

    walk(value)
    return strings


def joined_stream(events: list[Any]) -> list[str]:
    """The streamed pieces of SSE chat events joined per choice and field (content, reasoning, tool arguments):
    what a reader of the stream sees, whatever the chunk boundaries."""
    parts: dict[tuple[Any, ...], list[str]] = {}

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        if isinstance(value, dict):
            index = value.get("index")
            for k, v in value.items():
                if k != "index":
                    walk(v, (*path, index, k) if index is not None else (*path, k))
        elif isinstance(value, list):
            for v in value:
                walk(v, path)
        elif isinstance(value, str):
            parts.setdefault(path, []).append(value)

    for event in events:
        if isinstance(event, (dict, list)):
            walk(event, ())
    return ["".join(p) for p in parts.values() if len(p) > 1]


def _files(paths: Iterable[str | Path], missing: list[Path] | None = None) -> list[Path]:
    """The cassette files under ``paths``; a path that does not exist goes to ``missing`` when given (else raises)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in CASSETTE_SUFFIXES))
        elif p.is_file():
            out.append(p)
        elif missing is not None:
            missing.append(p)
        else:
            raise MissingFileError(
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
    """``hermes-envs lint-cassettes``: print findings; 1 when there are any, 2 when no given path exists, else 0.

    A missing path among existing ones is a note (a project that has not recorded yet has no cassette folder)."""
    import sys

    missing: list[Path] = []
    files = _files(paths, missing)
    if missing and len(missing) == len(paths):
        print(
            f"hermes-envs lint-cassettes: {', '.join(map(str, missing))} should be a cassette file or folder; "
            "none exists. Fix: check the path(s).",
            file=sys.stderr,
        )
        return 2
    for p in missing:
        print(
            f"lint-cassettes: note: {p} does not exist (nothing recorded there yet); skipped", file=sys.stderr
        )
    findings = lint_paths(files)
    for f in findings:
        print(f)
    n = len(files)
    print(
        f"lint-cassettes: {len(findings)} secret(s) in {n} file(s)"
        if findings
        else f"lint-cassettes: {n} file(s) clean"
    )
    return 1 if findings else 0
