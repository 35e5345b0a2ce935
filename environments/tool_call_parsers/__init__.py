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
    list_parsers,
    register_parser,
)
from hermes_envs.parsers.base import PARSERS


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

#: Built-in name -> upstream's class for it (filled below, once the submodules are imported).
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
