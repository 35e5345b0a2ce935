"""Upstream hermes-agent's tool-call parser classes (``environments.tool_call_parsers.*``) under upstream's names.

They live here, not in the ``environments/tool_call_parsers/`` files, which only re-export them: the env loader gives
each env file a fresh ``environments`` package, and a class defined in a module it re-imports would be a second class
object (``isinstance`` against the first one failed). Each class is the :mod:`hermes_envs.parsers` class for its
format under upstream's name, parsing as it does except where upstream's parser differs from vLLM's (``mistral``,
``qwen3_coder``; see docs/parsers.md).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, MutableMapping
from typing import Any

from hermes_envs.parsers import ParseResult, ToolCallParser, UnknownParserError, list_parsers, register_parser
from hermes_envs.parsers.auto import AutoParser
from hermes_envs.parsers.base import PARSERS
from hermes_envs.parsers.custom_xml import CustomXmlParser
from hermes_envs.parsers.deepseek import DeepSeekV3Parser, DeepSeekV31Parser
from hermes_envs.parsers.deepseek_v4 import DeepSeekV4Parser
from hermes_envs.parsers.glm import Glm45Parser, Glm47Parser
from hermes_envs.parsers.json_tagged import HermesParser, LongcatParser
from hermes_envs.parsers.kimi import KimiK2Parser
from hermes_envs.parsers.llama import Llama3JsonParser
from hermes_envs.parsers.mistral import MistralParser
from hermes_envs.parsers.qwen3_coder import Qwen3CoderParser

_UPSTREAM = "environments.tool_call_parsers"
#: Longer values are not given to ``ast.literal_eval`` (deep nesting can exhaust the C stack).
_LITERAL_LIMIT = 100_000


class AutoToolCallParser(AutoParser):
    """AutoParser under upstream's class name."""


class CustomXmlToolCallParser(CustomXmlParser):
    """CustomXmlParser under upstream's class name."""


class DeepSeekV31ToolCallParser(DeepSeekV31Parser):
    """DeepSeekV31Parser under upstream's class name."""


class DeepSeekV3ToolCallParser(DeepSeekV3Parser):
    """DeepSeekV3Parser under upstream's class name."""


class DeepSeekV4ToolCallParser(DeepSeekV4Parser):
    """DeepSeekV4Parser under upstream's class name."""


class Glm45ToolCallParser(Glm45Parser):
    """Glm45Parser under upstream's class name."""


class HermesToolCallParser(HermesParser):
    """HermesParser under upstream's class name."""


class KimiK2ToolCallParser(KimiK2Parser):
    """KimiK2Parser under upstream's class name."""


class LlamaToolCallParser(Llama3JsonParser):
    """Llama3JsonParser under upstream's class name."""


class LongcatToolCallParser(LongcatParser):
    """LongcatParser under upstream's class name."""


class Glm47ToolCallParser(Glm47Parser, Glm45ToolCallParser):
    """Glm47Parser under upstream's class name; an instance of Glm45ToolCallParser too, as upstream's is."""


class QwenToolCallParser(HermesToolCallParser):
    """Qwen 2.5's tool calls: the hermes ``<tool_call>`` JSON format (upstream's subclass of HermesToolCallParser)."""

    name = "qwen"


class MistralToolCallParser(MistralParser):
    """Mistral's ``[TOOL_CALLS]`` format; text with no readable call comes back unchanged (upstream's rule; vLLM's
    drops the token)."""

    def _parse(self, text: str, tools: list[dict[str, Any]] | None) -> ParseResult:
        result = super()._parse(text, tools)
        if result.tool_calls:
            return result
        return ParseResult(text, None, result.errors)


def upstream_value(raw: str) -> Any:
    """``raw`` decoded as upstream hermes-agent's qwen3_coder parser does when it has no schema: ``null``, JSON,
    Python literals (``True``), else the whitespace-stripped text (vLLM's keeps the text)."""
    stripped = raw.strip()
    if stripped.lower() == "null":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    if len(stripped) <= _LITERAL_LIMIT:
        try:
            value = ast.literal_eval(stripped)
            json.dumps(value)  # a set, bytes or complex number has no JSON form: keep the text
            return value
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return stripped


class Qwen3CoderToolCallParser(Qwen3CoderParser):
    """Qwen3-Coder XML calls; untyped values decoded as upstream's parser decodes them."""

    def _untyped_value(self, raw: str) -> Any:
        return upstream_value(raw)


# upstream's module paths, for reprs and pickling (each of those modules re-exports its class from here)
for _cls, _module in (
    (AutoToolCallParser, "auto_parser"),
    (CustomXmlToolCallParser, "custom_xml_parser"),
    (DeepSeekV31ToolCallParser, "deepseek_v3_1_parser"),
    (DeepSeekV3ToolCallParser, "deepseek_v3_parser"),
    (DeepSeekV4ToolCallParser, "deepseek_v4_parser"),
    (Glm45ToolCallParser, "glm45_parser"),
    (HermesToolCallParser, "hermes_parser"),
    (KimiK2ToolCallParser, "kimi_k2_parser"),
    (LlamaToolCallParser, "llama_parser"),
    (LongcatToolCallParser, "longcat_parser"),
    (Glm47ToolCallParser, "glm47_parser"),
    (QwenToolCallParser, "qwen_parser"),
    (MistralToolCallParser, "mistral_parser"),
    (Qwen3CoderToolCallParser, "qwen3_coder_parser"),
):
    _cls.__module__ = f"{_UPSTREAM}.{_module}"


class _RegistryView(MutableMapping[str, type[ToolCallParser]]):
    """Upstream's ``PARSER_REGISTRY`` dict (name -> class), kept in step with the shared parser registry."""

    def __getitem__(self, name: str) -> type[ToolCallParser]:
        return _upstream_class(name)

    def __setitem__(self, name: str, cls: type[ToolCallParser]) -> None:
        register_parser(name)(cls)

    def __delitem__(self, name: str) -> None:
        PARSERS.unregister(name)

    def __iter__(self) -> Iterator[str]:
        return iter(PARSERS.names())

    def __len__(self) -> int:
        return len(PARSERS)

    def __repr__(self) -> str:
        return f"PARSER_REGISTRY({dict(self)!r})"


#: name -> parser class, as upstream's module-level dict.
PARSER_REGISTRY: MutableMapping[str, type[ToolCallParser]] = _RegistryView()

#: Built-in name -> upstream's class for it.
_UPSTREAM_CLASSES: dict[str, type[ToolCallParser]] = {}


def _upstream_class(name: str) -> type[ToolCallParser]:
    """The class ``name`` stands for here: upstream's class while the shared registry still holds the built-in it
    derives from, else whatever was registered; an unknown name raises upstream's KeyError."""
    try:
        registered = PARSERS.get(name)
    except KeyError:
        raise UnknownParserError(
            f"Tool call parser {name!r} not found. Available parsers: {list_parsers()}"
        ) from None
    upstream = _UPSTREAM_CLASSES.get(name)
    if (
        upstream is not None
        and issubclass(upstream, registered)
        and registered.__module__.startswith("hermes_envs.")
    ):
        return upstream
    return registered


def get_parser(name: str) -> ToolCallParser:
    """A new instance of the parser named ``name`` (upstream's class for a built-in name); an unknown name raises
    ``KeyError`` listing the available parsers, in upstream's words."""
    return _upstream_class(name)()


_UPSTREAM_CLASSES.update(
    {
        "auto": AutoToolCallParser,
        "custom_xml": CustomXmlToolCallParser,
        "deepseek_v3": DeepSeekV3ToolCallParser,
        "deepseek_v3_1": DeepSeekV31ToolCallParser,
        "deepseek_v31": DeepSeekV31ToolCallParser,
        "deepseek_v4": DeepSeekV4ToolCallParser,
        "deepseek_dsml": DeepSeekV4ToolCallParser,
        "deepseek_v32": DeepSeekV4ToolCallParser,
        "glm45": Glm45ToolCallParser,
        "glm47": Glm47ToolCallParser,
        "hermes": HermesToolCallParser,
        "kimi_k2": KimiK2ToolCallParser,
        "llama3_json": LlamaToolCallParser,
        "longcat": LongcatToolCallParser,
        "mistral": MistralToolCallParser,
        "qwen": QwenToolCallParser,
        "qwen3_coder": Qwen3CoderToolCallParser,
    }
)

__all__ = [
    "AutoToolCallParser",
    "CustomXmlToolCallParser",
    "DeepSeekV31ToolCallParser",
    "DeepSeekV3ToolCallParser",
    "DeepSeekV4ToolCallParser",
    "Glm45ToolCallParser",
    "Glm47ToolCallParser",
    "HermesToolCallParser",
    "KimiK2ToolCallParser",
    "LlamaToolCallParser",
    "LongcatToolCallParser",
    "MistralToolCallParser",
    "PARSER_REGISTRY",
    "Qwen3CoderToolCallParser",
    "QwenToolCallParser",
    "get_parser",
    "upstream_value",
]
