"""Upstream hermes-agent's ``environments.tool_call_parsers`` package, on hermes-envs' parsers.

Every submodule upstream has is here under the same path with the same class name (``hermes_parser.
HermesToolCallParser`` ...), as aliases of :mod:`hermes_envs.parsers`: the same classes, so the registry, the agent
loop and Phase 2 see one parser per name. ``PARSER_REGISTRY`` is a live mapping over the shared registry (writing a
class into it registers it), ``register_parser``/``get_parser``/``list_parsers`` are ours (``register_parser`` also
takes several names), and a parser written upstream's way, a ``ToolCallParser`` subclass overriding only
``parse(self, text)``, works unchanged. ``ParseResult`` is ours and unpacks as upstream's ``(content, tool_calls)``
pair; ``parse`` returns that pair, as upstream's does. Every name the earlier single-module version exported is
still exported.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

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
    get_parser,
    list_parsers,
    register_parser,
)
from hermes_envs.parsers.base import PARSERS


class _RegistryView(MutableMapping[str, type[ToolCallParser]]):
    """Upstream's ``PARSER_REGISTRY`` dict (name -> class), kept in step with the shared parser registry."""

    def __getitem__(self, name: str) -> type[ToolCallParser]:
        return PARSERS.get(name)  # UnknownParserError is a KeyError

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

# the upstream submodules and their classes (imported here as upstream's __init__ does)
from environments.tool_call_parsers.auto_parser import AutoToolCallParser  # noqa: E402
from environments.tool_call_parsers.custom_xml_parser import CustomXmlToolCallParser  # noqa: E402
from environments.tool_call_parsers.deepseek_v3_1_parser import DeepSeekV31ToolCallParser  # noqa: E402
from environments.tool_call_parsers.deepseek_v3_parser import DeepSeekV3ToolCallParser  # noqa: E402
from environments.tool_call_parsers.deepseek_v4_parser import DeepSeekV4ToolCallParser  # noqa: E402
from environments.tool_call_parsers.glm45_parser import Glm45ToolCallParser  # noqa: E402
from environments.tool_call_parsers.glm47_parser import Glm47ToolCallParser  # noqa: E402
from environments.tool_call_parsers.hermes_parser import HermesToolCallParser  # noqa: E402
from environments.tool_call_parsers.kimi_k2_parser import KimiK2ToolCallParser  # noqa: E402
from environments.tool_call_parsers.llama_parser import LlamaToolCallParser  # noqa: E402
from environments.tool_call_parsers.longcat_parser import LongcatToolCallParser  # noqa: E402
from environments.tool_call_parsers.mistral_parser import MistralToolCallParser  # noqa: E402
from environments.tool_call_parsers.qwen3_coder_parser import Qwen3CoderToolCallParser  # noqa: E402
from environments.tool_call_parsers.qwen_parser import QwenToolCallParser  # noqa: E402

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
