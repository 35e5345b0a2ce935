"""Shortening text for messages and tables: one rule for where the cut goes and how it is marked.

Error messages, diffs and transcripts quote values that may be huge (a tool result, a request body); these helpers
cut them so one value cannot flood the output, and say that they did.
"""

from __future__ import annotations

from typing import Any

__all__ = ["clip", "exception_text", "quoted", "short_repr", "shorten"]


def shorten(text: str, limit: int, *, marker: str = "...") -> str:
    """``text`` if it has at most ``limit`` characters; else its start and ``marker``, ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(marker), 0)] + marker


def clip(text: str, keep: int, *, marker: str = "...", count: bool = False) -> str:
    """The first ``keep`` characters of ``text`` and ``marker`` when more followed (``count``: how many more)."""
    if len(text) <= keep:
        return text
    if count:
        marker = f"{marker} [{len(text) - keep:,} more characters]"
    return text[:keep] + marker


def short_repr(value: Any, limit: int, *, marker: str = "...") -> str:
    """``repr(value)`` shortened to ``limit`` characters, for quoting any value in a message."""
    return shorten(repr(value), limit, marker=marker)


def quoted(value: Any, limit: int) -> str:
    """A string shortened first, then quoted (so the quotes survive the cut); any other value as :func:`short_repr`."""
    if isinstance(value, str):
        return repr(shorten(value, limit))
    return short_repr(value, limit)


def exception_text(exc: BaseException, keep: int) -> str:
    """``str(exc)`` clipped to ``keep`` characters with a count of the rest; a broken ``__str__`` gives its type."""
    try:
        text = str(exc)
    except Exception:  # a broken __str__
        text = repr(type(exc))
    return clip(text, keep, count=True)
