"""Secret shapes for HC107 and HC901, from the one table in :mod:`hermes_envs.testing.secret_rules` (shared with the
cassette lint and redaction); findings show them redacted.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from hermes_envs.testing.secret_rules import RULES, looks_real, scan

#: The shapes (kind, pattern), in the order that names a secret: the shared table's rules.
SECRET_PATTERNS = tuple((rule.kind, rule.pattern) for rule in RULES)


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


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret-shaped, non-placeholder string in ``text`` (plain or base64/percent-encoded), with its line."""
    return [SecretMatch(h.kind, h.value, text.count("\n", 0, h.start) + 1) for h in scan(text)]


__all__ = [
    "SECRET_PATTERNS",
    "SecretMatch",
    "find_secrets",
    "looks_real",
    "KIT_CANARY_PREFIX",
    "planted_secret",
]


#: Names of the secrets the kit plants itself (HC904, HC905): reads of them are those checks' evidence, not HC903's.
KIT_CANARY_PREFIX = "HERMES_KIT_"


@contextlib.contextmanager
def planted_secret(name: str) -> Iterator[str]:
    """Set ``name`` (a :data:`KIT_CANARY_PREFIX` name) to a fresh random secret for the block; yields the value and
    restores what was there before."""
    previous = os.environ.get(name)
    os.environ[name] = value = f"hk-canary-{uuid.uuid4().hex}"
    try:
        yield value
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous
