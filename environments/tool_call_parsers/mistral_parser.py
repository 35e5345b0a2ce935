"""Upstream path ``environments.tool_call_parsers.mistral_parser``: ``MistralToolCallParser`` is :class:`hermes_envs.parsers.mistral.MistralParser`."""

from hermes_envs.parsers.mistral import MistralParser

MistralToolCallParser = MistralParser

__all__ = ["MistralToolCallParser"]
