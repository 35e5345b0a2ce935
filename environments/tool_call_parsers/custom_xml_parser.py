"""Upstream path ``environments.tool_call_parsers.custom_xml_parser``: ``CustomXmlToolCallParser``, :class:`hermes_envs.parsers.custom_xml.CustomXmlParser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import CustomXmlToolCallParser

__all__ = ["CustomXmlToolCallParser"]
