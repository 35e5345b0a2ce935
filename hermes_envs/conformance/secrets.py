"""Secret shapes (provider API keys, tokens, private keys) for HC107 and HC901; findings show them redacted.

A match must look like a real credential: the provider's prefix, enough characters, and enough different
characters that placeholders (``sk-xxxxxxxx``, ``sk-your-key-here``, ``hf_...``) do not count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: (kind, pattern). Order matters: the first kind that matches names the secret.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("OpenRouter API key", r"sk-or-v1-[A-Za-z0-9]{32,}"),
        ("Anthropic API key", r"sk-ant-[A-Za-z0-9]{2,8}\d*-[A-Za-z0-9_\-]{20,}"),
        ("OpenAI API key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        ("Hugging Face token", r"hf_[A-Za-z0-9]{30,}"),
        ("GitHub token", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        ("AWS access key id", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
        ("Google API key", r"AIza[0-9A-Za-z_\-]{35}"),
        ("Slack token", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
        ("Groq API key", r"gsk_[A-Za-z0-9]{40,}"),
        ("wandb API key", r"(?i)(?<=wandb_api_key)[\"'\s:=]{1,6}[0-9a-f]{40}"),
        ("private key", r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY(?: BLOCK)?-----"),
    )
)

_PLACEHOLDER = re.compile(
    r"(?i)(x{6,}|your|example|placeholder|dummy|fake|redacted|changeme|\.\.\.|<|>|\*{3,})"
)


@dataclass(frozen=True)
class SecretMatch:
    """A secret-shaped string: its kind, where it is, and the value (only ever shown redacted)."""

    kind: str
    value: str
    line: int

    @property
    def redacted(self) -> str:
        """The first characters and the length: enough to find it, not enough to use it."""
        value = self.value.strip("\"':= \t")
        if value.startswith("-----BEGIN"):
            return value
        return f"{value[:8]}…({len(value)} chars)"


_KEY_PREFIX = re.compile(r"^sk-(?:or-v\d+-|ant-[A-Za-z0-9]{2,8}\d*-|proj-|svcacct-|admin-)?")


def looks_real(value: str) -> bool:
    """True when ``value`` is not an obvious placeholder (enough distinct characters, no 'your-key' words).

    The body is the whole key after its provider prefix: real keys have dashes inside and near the end
    (Anthropic keys end in ``-...AA``), so looking only after the last dash would miss them.
    """
    if value.startswith("-----BEGIN"):
        return True
    body = _KEY_PREFIX.sub("", value).replace("-", "").replace("_", "")
    return len(set(body)) >= 10 and not _PLACEHOLDER.search(value)


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret-shaped, non-placeholder string in ``text``, with its line number (1-based)."""
    found: list[SecretMatch] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in SECRET_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(s <= start < e for s, e in taken) or not looks_real(match.group(0)):
                continue
            taken.append((start, end))
            found.append(SecretMatch(kind, match.group(0), text.count("\n", 0, start) + 1))
    return sorted(found, key=lambda m: m.line)


__all__ = ["SECRET_PATTERNS", "SecretMatch", "find_secrets", "looks_real"]
