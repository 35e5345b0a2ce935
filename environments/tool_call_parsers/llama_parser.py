"""Upstream path ``environments.tool_call_parsers.llama_parser``: ``LlamaToolCallParser`` is :class:`hermes_envs.parsers.llama.Llama3JsonParser`."""

from hermes_envs.parsers.llama import Llama3JsonParser

LlamaToolCallParser = Llama3JsonParser

__all__ = ["LlamaToolCallParser"]
