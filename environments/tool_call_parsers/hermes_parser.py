"""Upstream path ``environments.tool_call_parsers.hermes_parser``: ``HermesToolCallParser`` is :class:`hermes_envs.parsers.json_tagged.HermesParser`."""

from hermes_envs.parsers.json_tagged import HermesParser

HermesToolCallParser = HermesParser

__all__ = ["HermesToolCallParser"]
