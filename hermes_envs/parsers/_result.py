"""What a parse returns (:class:`ParseResult`), the capped list of problems, and how content is cut."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from openai.types.chat import ChatCompletionMessageToolCall

__all__ = ["MAX_ERRORS", "ParseResult", "Problems", "finish", "join_content"]


@dataclasses.dataclass
class ParseResult:
    """What :meth:`ToolCallParser.parse_detailed` found in a model output.

    ``content`` is the text before the first tool-call marker (trailing whitespace removed; None when empty), or
    the whole text unchanged when no call could be read. ``tool_calls`` is None when no call could be read.
    ``errors`` describes every problem met on the way (a call with invalid JSON, a call cut off by max tokens,
    text that was ignored), one sentence each, so broken calls are reported instead of silently dropped.
    ``format`` names the format the text was read as when the parser chose it (the ``auto`` parser), else None.

    It also unpacks as ``(content, tool_calls)``, the pair upstream's ``parse`` returns, so code written against
    upstream's ``ParseResult`` tuple keeps working.
    """

    content: str | None
    tool_calls: list[ChatCompletionMessageToolCall] | None = None
    errors: list[str] = dataclasses.field(default_factory=list)
    format: str | None = None

    def __iter__(self) -> Iterator[str | list[ChatCompletionMessageToolCall] | None]:
        return iter((self.content, self.tool_calls))

    @property
    def ok(self) -> bool:
        """True when nothing went wrong (no errors), whether or not calls were found."""
        return not self.errors


MAX_ERRORS = 50


class Problems(list[str]):
    """The ``errors`` list being built: after :data:`MAX_ERRORS` messages, further ones are only counted.

    Callers write ``if errors.room(): errors.append(...)`` so that degenerate output (thousands of broken
    markers) does not pay for formatting messages nobody will read.
    """

    dropped = 0

    def room(self) -> bool:
        """True while messages are still listed; otherwise counts one more dropped problem."""
        if len(self) < MAX_ERRORS:
            return True
        self.dropped += 1
        return False

    def final(self) -> list[str]:
        out = list(self)
        if self.dropped:
            out.append(f"{self.dropped} more problems of the same kind were not listed.")
        return out


def finish(
    text: str, first_marker: int, calls: list[ChatCompletionMessageToolCall], errors: list[str]
) -> ParseResult:
    """Build the result: content before the first marker when calls were read, else the whole text."""
    if isinstance(errors, Problems):
        errors = errors.final()
    if not calls:
        return ParseResult(text, None, errors)
    content = text[:first_marker].rstrip()
    return ParseResult(content or None, calls, errors)


def join_content(content: str | None, body: str, separator: str = "\n") -> str:
    """``content`` then ``separator`` then the rendered calls (no separator without content)."""
    return f"{content}{separator}{body}" if content else body
