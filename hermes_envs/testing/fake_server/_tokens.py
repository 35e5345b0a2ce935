"""Token helpers over the server's optional tokenizer: counts for ``usage``, ids, logprobs, end of turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._records import Call
from ._replies import Miss
from ._view import text_of

__all__ = [
    "TokenCounter",
    "decode",
    "encode_plain",
    "end_of_turn",
    "is_ids",
    "logprob",
    "need_tokenizer",
]


def need_tokenizer(tokenizer: Any, call: Call) -> None:
    """A 501 miss when a token route is asked without a tokenizer."""
    if tokenizer is None:
        raise Miss(
            f"POST {call.route} needs token ids, but the fake server has no tokenizer.\n"
            "Fix: pass tokenizer=... (any object with encode/decode, e.g. the offline tokenizer) to "
            "FakeOpenAIServer.",
            501,
            "no_tokenizer",
        )


def encode_plain(tokenizer: Any, text: str) -> list[int]:
    """Ids of ``text`` without special tokens (for tokenizers that take ``add_special_tokens``)."""
    try:
        return list(tokenizer.encode(text, add_special_tokens=False))
    except TypeError:
        return list(tokenizer.encode(text))


def decode(tokenizer: Any, ids: Any) -> str:
    """Text of ``ids`` (ids joined by spaces without a tokenizer)."""
    if tokenizer is None:
        return " ".join(str(i) for i in ids)
    return tokenizer.decode(list(ids))


class TokenCounter:
    """Token counts for ``usage``, memoised per text: a conversation resends its whole history every turn, and a
    tokenizer call costs far more than a dict lookup (the offline tokenizer through transformers: about 30 us for
    "ok", over a millisecond for a long tool result). A HF fast tokenizer is called through its Rust backend.

    Bounded: a text is tokenized in pieces of at most :attr:`PIECE` characters (cut at whitespace), so neither the
    tokenizer's memory (hundreds of bytes per token) nor its hold on the GIL grows with the text; past
    :attr:`EXACT` characters the rest is counted at the ratio measured on the first :attr:`EXACT` (a 60 MB body
    costs about a second, not minutes and gigabytes)."""

    _MAX = 8192  # texts kept; the cache is emptied when full (a long run's history moves on)
    _MAX_CHARS = 64 * 1024 * 1024  # ... or when the texts it keeps add up to this many characters
    PIECE = 16 * 1024
    EXACT = 1024 * 1024

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._cache: dict[str, int] = {}
        self._cached_chars = 0
        backend = getattr(tokenizer, "backend_tokenizer", None)
        self._encode: Callable[[str], Any] | None
        if backend is not None and callable(getattr(backend, "encode", None)):
            self._encode = lambda text: backend.encode(text, add_special_tokens=False).ids
        elif tokenizer is not None:
            self._encode = lambda text: encode_plain(tokenizer, text)
        else:
            self._encode = None

    def contents(self, messages: list[Any]) -> int:
        """Tokens in the contents of chat ``messages`` (validated: mappings), summed: one call per request.

        Texts not counted before are counted exactly up to :attr:`EXACT` characters per request; the rest (a
        body of 60 000 new messages) at the ratio measured so far."""
        cache, total = self._cache, 0
        fresh_chars = fresh_tokens = 0
        for m in messages:
            content = m.get("content")
            text = content if type(content) is str else text_of(content)
            n = cache.get(text)
            if n is None:
                if fresh_chars >= self.EXACT and self._encode is not None:
                    n = -(-fresh_tokens * len(text) // fresh_chars)
                else:
                    n = self(text)
                    fresh_chars += min(len(text), self.EXACT)
                    fresh_tokens += n if len(text) <= self.EXACT else -(-n * self.EXACT // len(text))
            total += n
        return total

    def __call__(self, text: str) -> int:
        """Tokens in ``text``: exact with a tokenizer (extrapolated past :attr:`EXACT` characters), else
        ``ceil(chars / 4)``."""
        if self._encode is None or not text:
            return (len(text) + 3) // 4
        n = self._cache.get(text)
        if n is None:
            if len(self._cache) >= self._MAX or self._cached_chars + len(text) > self._MAX_CHARS:
                self._cache.clear()
                self._cached_chars = 0
            n = len(self._encode(text)) if len(text) <= self.PIECE else self._long(text)
            if len(text) <= self._MAX_CHARS // 8:
                self._cache[text] = n
                self._cached_chars += len(text)
        return n

    def _long(self, text: str) -> int:
        """Tokens in a long text, piece by piece (see the class docstring)."""
        assert self._encode is not None
        total, at, end = 0, 0, min(len(text), self.EXACT)
        while at < end:
            stop = min(at + self.PIECE, end)
            if stop < end:  # cut before a space, where BPE pre-tokenizers cut anyway
                space = text.rfind(" ", at + 1, stop)
                stop = space if space > at else stop
            total += len(self._encode(text[at:stop]))
            at = stop
        if end < len(text):
            total += -(-total * (len(text) - end) // end)
        return total


def end_of_turn(tokenizer: Any, finish: str) -> list[int]:
    """The end-of-turn token a real model emits when it stops on its own (none when cut by length)."""
    eos = getattr(tokenizer, "eos_token_id", None)
    return [int(eos)] if finish != "length" and isinstance(eos, int) else []


def logprob(token_id: int) -> float:
    """A deterministic, negative logprob for a token id."""
    return -round(0.01 * ((token_id % 50) + 1), 4)


def is_ids(x: Any) -> bool:
    """Whether ``x`` is a list of token ids."""
    return isinstance(x, list) and all(isinstance(i, int) for i in x)
