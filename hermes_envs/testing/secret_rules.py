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
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = [
    "RULES",
    "Rule",
    "SecretHit",
    "looks_real",
    "redact_secrets",
    "redact_text",
    "scan",
    "scan_secrets",
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
    r"auth[_\-]?token|password|passwd|secret|private[_\-]?key)"
)

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
        return digit
    if charset == "any":
        return digit or (upper and lower)
    if charset == "keyword":
        if body.startswith("/") or "://" in body:
            return False
        if re.fullmatch(r"[0-9a-fA-F]{32,}", body):
            return digit and (upper or lower)
        return upper + lower + digit >= 3 and not _wordy(body)
    return digit and (upper or lower) and not _wordy(body)


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
