"""Upstream path ``environments.tool_call_parsers.custom_xml_parser``: ``CustomXmlToolCallParser`` is :class:`hermes_envs.parsers.custom_xml.CustomXmlParser`."""

from hermes_envs.parsers.custom_xml import CustomXmlParser

CustomXmlToolCallParser = CustomXmlParser

__all__ = ["CustomXmlToolCallParser"]
