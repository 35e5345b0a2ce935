"""Upstream path ``environments.tool_call_parsers.qwen_parser``: ``QwenToolCallParser``, the hermes format under
the ``qwen`` name (as upstream's, a subclass of ``HermesToolCallParser``)."""

from hermes_envs.compat.upstream_parsers import QwenToolCallParser

__all__ = ["QwenToolCallParser"]
