"""Compatibility facade: the names that lived in this module before it was split along its seams.

``_errors`` (the errors), ``_result`` (ParseResult and the problem list), ``_json`` (JSON helpers), ``_calls``
(tool-call objects), ``_scan`` (forward-only scanning), ``_base`` (the base class), ``_sections`` (section-marker
formats) and ``_registry`` (the registry). Import public names from :mod:`hermes_envs.parsers`.
"""

from __future__ import annotations

from hermes_envs.parsers._base import ToolCallParser
from hermes_envs.parsers._calls import call_parts, make_tool_call, new_call_id
from hermes_envs.parsers._errors import (
    ParserArgumentError,
    ParserError,
    ParserRegistrationError,
    UnknownParserError,
)
from hermes_envs.parsers._json import (
    JsonMemo,
    arguments_to_json,
    call_from_object,
    decode_json_at,
    dumps,
    excerpt,
    loads_strict,
    scan_json_at,
    skip_ws,
)
from hermes_envs.parsers._registry import PARSERS, get_parser, list_parsers, register_parser
from hermes_envs.parsers._result import MAX_ERRORS, ParseResult, Problems, finish, join_content
from hermes_envs.parsers._scan import (
    MISTRAL_THINK_CLOSE,
    MISTRAL_THINK_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    Finder,
    MarkerScanner,
)
from hermes_envs.parsers._sections import SectionedJsonParser

__all__ = [
    "MAX_ERRORS",
    "MISTRAL_THINK_CLOSE",
    "MISTRAL_THINK_OPEN",
    "PARSERS",
    "THINK_CLOSE",
    "THINK_OPEN",
    "Finder",
    "JsonMemo",
    "MarkerScanner",
    "ParseResult",
    "ParserArgumentError",
    "ParserError",
    "ParserRegistrationError",
    "Problems",
    "SectionedJsonParser",
    "ToolCallParser",
    "UnknownParserError",
    "arguments_to_json",
    "call_from_object",
    "call_parts",
    "decode_json_at",
    "dumps",
    "excerpt",
    "finish",
    "get_parser",
    "join_content",
    "list_parsers",
    "loads_strict",
    "make_tool_call",
    "new_call_id",
    "register_parser",
    "scan_json_at",
    "skip_ws",
]
