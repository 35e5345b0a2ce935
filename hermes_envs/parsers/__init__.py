"""Tool-call parsers: read tool calls out of a model's raw text, and render them back.

>>> from hermes_envs.parsers import get_parser
>>> content, calls = get_parser("hermes").parse('Sure.\\n<tool_call>{"name": "f", "arguments": {}}</tool_call>')
>>> content, calls[0].function.name, calls[0].function.arguments
('Sure.', 'f', '{}')

Every parser can ``parse`` (never raises), ``parse_detailed`` (also lists broken calls) and ``render``.
This package imports nothing heavier than ``openai``'s types (no atroposlib, no transformers).
"""

from hermes_envs.parsers.auto import AutoParser
from hermes_envs.parsers.base import (
    ParserArgumentError,
    ParserError,
    ParseResult,
    ParserRegistrationError,
    ToolCallParser,
    UnknownParserError,
    get_parser,
    list_parsers,
    register_parser,
)
from hermes_envs.parsers.custom_xml import CustomXmlParser, XmlLayout, custom_xml_format
from hermes_envs.parsers.deepseek import DeepSeekV3Parser, DeepSeekV31Parser
from hermes_envs.parsers.deepseek_v4 import DeepSeekV4Parser
from hermes_envs.parsers.glm import Glm45Parser, Glm47Parser
from hermes_envs.parsers.json_tagged import HermesParser, JsonTaggedParser, LongcatParser
from hermes_envs.parsers.kimi import KimiK2Parser
from hermes_envs.parsers.llama import Llama3JsonParser, Llama4JsonParser
from hermes_envs.parsers.mistral import MistralParser
from hermes_envs.parsers.qwen3_coder import Qwen3CoderParser
from hermes_envs.parsers.schema_typing import ToolSchemas, convert_value
from hermes_envs.parsers.xml_params import XmlParamsParser

__all__ = [
    "AutoParser",
    "CustomXmlParser",
    "DeepSeekV31Parser",
    "DeepSeekV3Parser",
    "DeepSeekV4Parser",
    "Glm45Parser",
    "Glm47Parser",
    "HermesParser",
    "JsonTaggedParser",
    "KimiK2Parser",
    "Llama3JsonParser",
    "Llama4JsonParser",
    "LongcatParser",
    "MistralParser",
    "ParseResult",
    "ParserArgumentError",
    "ParserError",
    "ParserRegistrationError",
    "Qwen3CoderParser",
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
