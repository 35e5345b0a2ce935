"""Upstream path ``environments.tool_call_parsers.qwen_parser``: ``QwenToolCallParser``, the hermes format under
the ``qwen`` name (as upstream's, a subclass of ``HermesToolCallParser``)."""

from environments.tool_call_parsers.hermes_parser import HermesToolCallParser

__all__ = ["QwenToolCallParser"]


class QwenToolCallParser(HermesToolCallParser):
    """Qwen 2.5's tool calls: the hermes ``<tool_call>`` JSON format."""

    name = "qwen"
