"""Upstream hermes-agent's ``environments.tool_call_parsers`` package, on hermes-envs' parsers.

Every submodule upstream has is here under the same path, with upstream's class name (``hermes_parser.
HermesToolCallParser`` ...): a subclass of the :mod:`hermes_envs.parsers` class for that format, parsing as it does
except where upstream's own parser differs from vLLM's (``mistral``: text with no readable call comes back
unchanged; ``qwen3_coder``: a value no schema types is decoded, ``42`` -> 42; see docs/parsers.md). This package's
``get_parser(name)`` returns those classes for the built-in names (any parser registered under a name since, by
``register_parser`` or into ``PARSER_REGISTRY``, is returned as registered) and raises upstream's ``KeyError``
("Tool call parser 'x' not found. Available parsers: [...]"). ``PARSER_REGISTRY`` is a live mapping over the shared
registry; a parser written upstream's way, a ``ToolCallParser`` subclass overriding only ``parse(self, text)``,
works unchanged. ``ParseResult`` is ours and unpacks as upstream's ``(content, tool_calls)`` pair. Every name the
earlier single-module version exported is still exported.
"""

from __future__ import annotations

# the upstream submodules and their classes (imported here as upstream's __init__ does)
from environments.tool_call_parsers.auto_parser import AutoToolCallParser
from environments.tool_call_parsers.custom_xml_parser import CustomXmlToolCallParser
from environments.tool_call_parsers.deepseek_v3_1_parser import DeepSeekV31ToolCallParser
from environments.tool_call_parsers.deepseek_v3_parser import DeepSeekV3ToolCallParser
from environments.tool_call_parsers.deepseek_v4_parser import DeepSeekV4ToolCallParser
from environments.tool_call_parsers.glm45_parser import Glm45ToolCallParser
from environments.tool_call_parsers.glm47_parser import Glm47ToolCallParser
from environments.tool_call_parsers.hermes_parser import HermesToolCallParser
from environments.tool_call_parsers.kimi_k2_parser import KimiK2ToolCallParser
from environments.tool_call_parsers.llama_parser import LlamaToolCallParser
from environments.tool_call_parsers.longcat_parser import LongcatToolCallParser
from environments.tool_call_parsers.mistral_parser import MistralToolCallParser
from environments.tool_call_parsers.qwen3_coder_parser import Qwen3CoderToolCallParser
from environments.tool_call_parsers.qwen_parser import QwenToolCallParser
from hermes_envs.compat.upstream_parsers import PARSER_REGISTRY, get_parser
from hermes_envs.parsers import (  # every name the single-module version exported
    AutoParser,
    CustomXmlParser,
    DeepSeekV3Parser,
    DeepSeekV4Parser,
    DeepSeekV31Parser,
    Glm45Parser,
    Glm47Parser,
    HermesParser,
    JsonTaggedParser,
    KimiK2Parser,
    Llama3JsonParser,
    Llama4JsonParser,
    LongcatParser,
    MistralParser,
    ParserArgumentError,
    ParserError,
    ParseResult,
    ParserRegistrationError,
    Qwen3CoderParser,
    ToolCallParser,
    ToolSchemas,
    UnknownParserError,
    XmlLayout,
    XmlParamsParser,
    convert_value,
    custom_xml_format,
    list_parsers,
    register_parser,
)

__all__ = [
    "AutoParser",
    "AutoToolCallParser",
    "CustomXmlParser",
    "CustomXmlToolCallParser",
    "DeepSeekV31Parser",
    "DeepSeekV31ToolCallParser",
    "DeepSeekV3Parser",
    "DeepSeekV3ToolCallParser",
    "DeepSeekV4Parser",
    "DeepSeekV4ToolCallParser",
    "Glm45Parser",
    "Glm45ToolCallParser",
    "Glm47Parser",
    "Glm47ToolCallParser",
    "HermesParser",
    "HermesToolCallParser",
    "JsonTaggedParser",
    "KimiK2Parser",
    "KimiK2ToolCallParser",
    "Llama3JsonParser",
    "Llama4JsonParser",
    "LlamaToolCallParser",
    "LongcatParser",
    "LongcatToolCallParser",
    "MistralParser",
    "MistralToolCallParser",
    "PARSER_REGISTRY",
    "ParseResult",
    "ParserArgumentError",
    "ParserError",
    "ParserRegistrationError",
    "Qwen3CoderParser",
    "Qwen3CoderToolCallParser",
    "QwenToolCallParser",
    "ToolCallParser",
    "ToolSchemas",
    "UnknownParserError",
    "XmlLayout",
    "XmlParamsParser",
    "convert_value",
    "custom_xml_format",
    "get_parser",
    "list_parsers",
    "register_parser",
]
