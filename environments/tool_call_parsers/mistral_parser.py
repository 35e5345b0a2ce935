"""Upstream path ``environments.tool_call_parsers.mistral_parser``: ``MistralToolCallParser``, as upstream's.

Where no call can be read, upstream returns the text unchanged as the content; :class:`hermes_envs.parsers.mistral.
MistralParser` follows vLLM, which drops the ``[TOOL_CALLS]`` token from it. This class keeps the text as is.
"""

from hermes_envs.compat.upstream_parsers import MistralToolCallParser

__all__ = ["MistralToolCallParser"]
