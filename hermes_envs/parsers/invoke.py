"""Call a tool-call parser with the request's tools when it takes them.

The contract's parser API is ``parse(text) -> (content, tool_calls)``; ours adds ``tools=`` (to type XML-ish values
by the tool schemas). Custom parsers written to the contract have no ``tools`` parameter, so the loop and the
Phase 2 translator call them through :func:`parse_with`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Protocol

from hermes_envs.parsers._types import ParsedPair, ToolSchema

__all__ = ["ContractParser", "parse_with"]


class ContractParser(Protocol):
    """A parser written to the contract: ``parse(text)`` returns ``(content, tool_calls)``; ours also take
    ``tools=``."""

    def parse(self, text: str) -> ParsedPair: ...


@functools.lru_cache(maxsize=256)
def _takes_tools(parse: Callable[..., object]) -> bool:
    try:
        params = inspect.signature(parse).parameters.values()
    except (TypeError, ValueError):  # a builtin or an odd callable: assume the contract's signature
        return False
    return any(p.name == "tools" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def parse_with(parser: ContractParser, text: str, tools: list[ToolSchema] | None) -> ParsedPair:
    """``parser.parse(text, tools=tools)`` when its ``parse`` accepts ``tools``, else ``parser.parse(text)``."""
    parse = getattr(type(parser), "parse", None)
    if parse is not None and _takes_tools(parse):
        # _takes_tools read the signature: this parse takes tools= beside the contract's text
        parse_tools: Callable[..., ParsedPair] = parser.parse
        return parse_tools(text, tools=tools)
    return parser.parse(text)
