"""The one table of credential shapes, used by the cassette lint, the cassette redaction and HC107/HC901.

A match must look like a real credential: a provider's prefix (or, for keys without one, the name it is written
under: ``aws_secret_access_key: ...``, ``MISTRAL_API_KEY=...``), enough characters, and enough randomness that
prose (``sk-learn-preprocessing``, ``AKIAPOLYNESIANISLAND``) and placeholders (``sk-xxxx``, ``sk-your-key-here``)
do not count. :func:`scan` also looks inside encoded forms: base64 runs and percent-encoded text are decoded and
scanned again, so ``base64(OPENAI_API_KEY=sk-...)`` is found.

Why our own table rather than detect-secrets' plugins: detect-secrets (last release 2024) has no rule for the LLM
providers' keys this package is about (xAI, Anthropic, OpenRouter, Groq, Fireworks, Hugging Face ...), and its
high-entropy plugins flag every base64 image and request id a cassette holds. Its keyword idea (a secret named
by the key it is written under) is what the ``keyword`` rule below does.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus, unquote

__all__ = [
    "RULES",
    "Rule",
    "SecretHit",
    "encoded_forms",
    "looks_real",
    "redact_secrets",
    "redact_text",
    "scan",
    "scan_secrets",
    "secret_name",
    "sse_events",
]


@dataclass(frozen=True)
class Rule:
    """A credential shape: ``pattern`` (the secret is group ``s`` when present, else the whole match) and the
    character classes a real one of it has (``mixed``: base62-like, ``hex``, ``upper``: base32, ``any``)."""

    kind: str
    pattern: re.Pattern[str]
    charset: str = "mixed"
    prefix: str = ""


def _r(kind: str, pattern: str, charset: str = "mixed", prefix: str = "") -> Rule:
    return Rule(kind, re.compile(pattern), charset, prefix)


#: Keyword part of a name that holds a credential (``MISTRAL_API_KEY``, ``aws_secret_access_key``, ``api-key``).
SECRET_NAME = re.compile(
    r"(?i)(?:api[_\-]?key|secret[_\-]?access[_\-]?key|secret[_\-]?key|client[_\-]?secret|access[_\-]?token|"
    r"auth[_\-]?token|password|passwd|secret|private[_\-]?key|access[_\-]?key|session[_\-]?key)"
)

_NAME_END = re.compile(
    r"(?:^|_)(?:key|apikey|token|secret|password|passwd|pwd|auth|sig|signature|credentials?|session)$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def secret_name(name: str) -> bool:
    """Whether a header, query parameter or JSON field named ``name`` holds a credential: it contains a
    :data:`SECRET_NAME` keyword, or its last word (camelCase and ``-`` split too) is ``key``, ``token``,
    ``secret``, ``session`` ... (``X-Portkey-Api-Key``, ``accessKey``, ``token``, ``X-Session-Key``; not
    ``max_tokens`` or ``tokenizer``)."""
    if SECRET_NAME.search(name):
        return True
    return bool(_NAME_END.search(_CAMEL.sub("_", name).lower().replace("-", "_")))


def encoded_forms(value: str) -> set[str]:
    """The forms a known secret ``value`` takes inside encoded text: base64 (standard and URL-safe, at each of the
    three byte offsets it can start at inside a longer encoded text: the characters only it decides) and
    percent-encoding. Forms shorter than 12 characters are left out (they would match by chance)."""
    raw = value.encode("utf-8")
    out: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        end = (shift + len(raw)) // 3 * 4  # groups made of the value's bytes alone
        piece = encoded[4 if shift else 0 : end]
        for form in (piece, piece.replace("+", "-").replace("/", "_")):
            if len(form) >= 12:
                out.add(form)
    for form in (quote(value, safe=""), quote_plus(value, safe=""), quote(value)):
        if form != value:
            out.add(form)
    out.discard(value)
    return out


_SSE_FIELD = re.compile(r"^(data|event|id|retry)(?::|$)|^:")


def sse_events(text: str) -> list[tuple[list[str], Any]] | None:
    """An SSE body as ``(other lines, JSON value of its data lines or None)`` per event, or None when ``text`` is not
    an event stream. Every spelling the SSE standard allows is read: ``data:`` with or without the space, several
    ``data:`` lines joined, ``event:`` / ``id:`` / ``retry:`` / comment lines beside them, CRLF or LF."""
    lines_all = text.replace("\r\n", "\n").replace("\r", "\n")
    if not re.search(r"(?m)^data:", lines_all) or lines_all.lstrip()[:1] in ("{", "["):
        return None
    events: list[tuple[list[str], Any]] = []
    for block in lines_all.split("\n\n"):
        if not block.strip():
            continue
        data: list[str] = []
        other: list[str] = []
        for line in block.split("\n"):
            if line.startswith("data:"):
                rest = line[5:]
                data.append(rest[1:] if rest.startswith(" ") else rest)
            else:
                other.append(line)
        value: Any = None
        if data:
            try:
                value = json.loads("\n".join(data))
            except ValueError:
                value = None
        if not isinstance(value, (dict, list)) or any(not _SSE_FIELD.match(o) for o in other if o):
            value = None
        events.append((other if value is not None else [block], value))
    return events


#: Ordered: the first rule that claims a span names it.
RULES: tuple[Rule, ...] = (
    _r("PEM private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", "any"),
    _r("OpenRouter API key", r"\bsk-or-v1-[A-Za-z0-9]{32,}", prefix="sk-or-v1-"),
    _r("Anthropic API key", r"\bsk-ant-(?:[a-z]+\d*-)?[A-Za-z0-9_\-]{20,}", prefix="sk-ant-"),
    _r(
        "OpenAI API key",
        r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
        prefix="sk-",
    ),
    _r("xAI API key", r"\bxai-[A-Za-z0-9]{40,}", prefix="xai-"),
    _r("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}", prefix="hf_"),
    _r("Groq API key", r"\bgsk_[A-Za-z0-9]{40,}", prefix="gsk_"),
    _r("Replicate token", r"\br8_[A-Za-z0-9]{30,}", prefix="r8_"),
    _r("Fireworks API key", r"\bfw_[A-Za-z0-9]{20,}", prefix="fw_"),
    _r("Perplexity API key", r"\bpplx-[A-Za-z0-9]{40,}", prefix="pplx-"),
    _r("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}", prefix="AIza"),
    _r("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})"),
    _r("GitLab token", r"\bglpat-[A-Za-z0-9_\-]{20,}", prefix="glpat-"),
    _r("npm token", r"\bnpm_[A-Za-z0-9]{36,}", prefix="npm_"),
    _r("Slack token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "any"),
    _r("Slack webhook", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/(?P<s>[A-Za-z0-9]{16,})"),
    _r("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}"),
    _r("SendGrid key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    _r("AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b", "upper", "AKIA"),
    _r("JSON web token", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "any"),
    _r(
        "password in a URL",
        r"\b[a-z][a-z0-9+.\-]{0,30}://[^\s:/@'\"]{1,256}:(?P<s>[^\s@/'\"]{1,256})@",
        "password",
    ),
    _r("bearer token", r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9_\-.=~+/]{20,})"),
    _r(
        "credential",
        r"(?i)(?P<name>" + SECRET_NAME.pattern[4:] + r"[A-Za-z0-9_\-]{0,40})"
        r"[\"']?\s*[:=]\s*\\?[\"']?(?P<s>[A-Za-z0-9+/_\-.~]{16,}={0,2})",
        "keyword",
    ),
)

_PLACEHOLDER = re.compile(
    r"(?i)(x{6,}|your|example|placeholder|dummy|changeme|redacted|\.\.\.|<|>|\*{3,}|\$\{|\{\{)"
)
_SEGMENT = re.compile(r"[^\-_.]+")
_WORD = re.compile(r"[a-z]{3,}|[A-Z][a-z]{2,}")


def _wordy(body: str) -> bool:
    """True when most of ``body`` is made of dictionary-like words between separators (``learn-model-selection``)."""
    segments = _SEGMENT.findall(body)
    words = sum(len(s) for s in segments if _WORD.fullmatch(s))
    return words * 2 >= len(body.replace("-", "").replace("_", "").replace(".", "")) and len(segments) >= 2


def looks_real(value: str, charset: str = "mixed", prefix: str = "") -> bool:
    """True when ``value`` is random enough to be a credential, not prose or a placeholder."""
    if value.startswith("-----BEGIN"):
        return True
    if _PLACEHOLDER.search(value):
        return False
    if charset == "password":
        return len(value) >= 4
    body = value[len(prefix) :] if prefix and value.startswith(prefix) else value
    body = re.sub(r"^(?:or-v\d+-|ant-[a-z]+\d*-|proj-|svcacct-|admin-)", "", body)
    core = body.replace("-", "").replace("_", "")
    if len(set(core)) < 8:
        return False
    upper = any(c.isupper() for c in core)
    lower = any(c.islower() for c in core)
    digit = any(c.isdigit() for c in core)
    if charset == "hex":
        return digit and (upper or lower)
    if charset == "upper":
        return digit or _random_letters(core)
    if charset == "any":
        return digit or (upper and lower)
    if charset == "keyword":
        if body.startswith("/") or "://" in body:
            return False
        if re.fullmatch(r"[0-9a-fA-F]{32,}", body):
            return digit and (upper or lower)
        return upper + lower + digit >= 3 and not _wordy(body)
    return digit and (upper or lower) and not _wordy(body)


def _random_letters(letters: str) -> bool:
    """Whether a run of capital letters reads as random, not as words: about 1 in 28 real AWS key ids has no digit
    (``AKIA`` + 16 of A-Z2-7), while ``AKIAPOLYNESIANISLAND`` alternates vowels and consonants. Random letters have
    few vowels or a run of four consonants; words have neither."""
    vowels = sum(c in "AEIOUY" for c in letters)
    longest = run = 0
    for c in letters:
        run = 0 if c in "AEIOUY" else run + 1
        longest = max(longest, run)
    rare = sum(c in "JQXZ" for c in letters)
    return bool(
        vowels * 10 < len(letters) * 3
        or longest >= 4
        or rare >= 2
        or (rare and vowels * 10 < len(letters) * 4)
    )


@dataclass(frozen=True)
class SecretHit:
    """A credential in a text: its kind, the secret (only ever shown masked) and its span in the text scanned."""

    kind: str
    value: str
    start: int
    end: int


def _direct(text: str) -> Iterator[SecretHit]:
    taken: list[tuple[int, int]] = []
    for rule in RULES:
        for m in rule.pattern.finditer(text):
            group = "s" if "s" in rule.pattern.groupindex else 0
            start, end = m.span(group)
            if any(a < end and start < b for a, b in taken):
                continue
            value = m.group(group)
            if not looks_real(value, rule.charset, rule.prefix):
                continue
            taken.append((start, end))
            yield SecretHit(rule.kind, value, start, end)


_B64_RUN = re.compile(r"[A-Za-z0-9+/\-_]{24,}={0,2}")
_PCT_RUN = re.compile(r"[A-Za-z0-9%._\-~+=]+")


def _decoded_b64(run: str) -> str | None:
    padded = run + "=" * (-len(run) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            raw = decode(padded.encode("ascii"))
            text = raw.decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        if text and sum(c.isprintable() or c in "\n\r\t" for c in text) >= 0.95 * len(text):
            return text
    return None


def scan(text: str, *, decode: bool = True) -> list[SecretHit]:
    """Every credential in ``text``, plain or inside a base64 / percent-encoded run (reported as the whole run)."""
    hits = list(_direct(text))
    if decode:
        spans = [(h.start, h.end) for h in hits]
        encoded = [(m, _decoded_b64(m.group(0)), "base64-encoded") for m in _B64_RUN.finditer(text)]
        if "%" in text:
            encoded += [
                (m, unquote(m.group(0)), "percent-encoded")
                for m in _PCT_RUN.finditer(text)
                if "%" in m.group(0)
            ]
        for m, decoded, how in encoded:
            if not decoded or decoded == m.group(0) or any(a < m.end() and m.start() < b for a, b in spans):
                continue
            inner = _direct(decoded)
            first = next(iter(inner), None)
            if first is not None:
                hits.append(SecretHit(f"{how} {first.kind}", m.group(0), m.start(), m.end()))
                spans.append(m.span())
    return sorted(hits, key=lambda h: h.start)


_PEM_BLOCK = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\[nrt])*"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
)


def redact_text(text: str, placeholder: str = "REDACTED") -> str:
    """``text`` with every credential :func:`scan` finds (a PEM key: the whole block) replaced by ``placeholder``."""
    text = _PEM_BLOCK.sub(placeholder, text)
    hits = scan(text)
    for hit in sorted(hits, key=lambda h: h.start, reverse=True):
        text = text[: hit.start] + placeholder + text[hit.end :]
    return text


#: Package-level names (``hermes_envs.testing.scan_secrets`` / ``redact_secrets``).
scan_secrets = scan
redact_secrets = redact_text
