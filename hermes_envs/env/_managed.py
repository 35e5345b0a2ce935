"""Phase 2: exact-token rollouts through atroposlib's ``ManagedServer`` with OUR tool-call parsers.

atroposlib's ManagedServer turns chat requests into token-endpoint calls (vLLM / SGLang ``/generate``) and tracks
exact tokens, masks and logprobs. For tool calls it relies on vLLM's parsers; without vLLM installed it silently
drops the tools from the prompt and never parses calls. :class:`ParserTranslator` plugs our parser registry into
the same slot, so tools are rendered by the chat template, model text is parsed with the configured parser, and an
assistant turn with tool calls is re-rendered as the exact text the model produced (so the next prompt extends the
tracked tokens instead of re-tokenizing them).
"""

from __future__ import annotations

import json
from typing import Any

from atroposlib.envs.server_handling.managed_server import ManagedServer

from hermes_envs._json_types import JSONObject, Message
from hermes_envs.parsers import get_parser
from hermes_envs.parsers.invoke import parse_with

__all__ = ["HermesManagedServer", "ParserTranslator", "pick_server"]


class ParserTranslator:
    """Bidirectional text <-> tool_calls translation with a hermes-envs parser (the ManagedServer translator API)."""

    def __init__(self, tokenizer: Any, parser_name: str = "hermes") -> None:
        self.tokenizer = tokenizer
        self.parser_name = parser_name
        self.parser = get_parser(parser_name)
        bind = getattr(self.parser, "bind_tokenizer", None)
        if callable(bind):  # the "auto" parser picks the format from the model's chat template
            bind(tokenizer)
        self.call_id_to_raw_text: dict[str, str] = {}

    def parse_model_output(
        self, raw_text: str, tool_choice: str | None = None, tools: list[JSONObject] | None = None
    ) -> tuple[str | None, list[Any] | None, str]:
        """``(content, tool_calls, finish_reason)`` of one raw model output."""
        # ManagedServer decodes with special tokens kept when tools are active; the reply's content must not
        # carry the end-of-turn token (the tracked node keeps the raw text, so training tokens are unaffected).
        text = self._strip_end_of_turn(raw_text)
        if tool_choice == "none" or not tools:
            return text, None, "stop"
        content, calls = parse_with(self.parser, text, tools)
        if not calls:
            return text, None, "stop"
        for call in calls:
            self.call_id_to_raw_text[call.id] = text
        return content or "", calls, "tool_calls"

    def _strip_end_of_turn(self, text: str) -> str:
        eos = getattr(self.tokenizer, "eos_token", None)
        if eos and text.endswith(eos):
            return text[: -len(eos)]
        return text

    def reconstruct_raw_text_from_tool_calls(
        self, tool_calls: list[JSONObject], content: str | None = None
    ) -> str:
        """The raw text behind an assistant turn's tool calls: exact when we parsed it, else re-rendered."""
        if not tool_calls:
            return content or ""
        first_id = (tool_calls[0] or {}).get("id", "")
        if first_id in self.call_id_to_raw_text:
            return self.call_id_to_raw_text[first_id]
        calls = []
        for tc in tool_calls:
            fn = dict(tc.get("function") or {})
            if not isinstance(fn.get("arguments"), str):
                fn["arguments"] = json.dumps(fn.get("arguments") or {})
            calls.append({"id": tc.get("id", ""), "type": "function", "function": fn})
        return self.parser.render(content or None, calls)

    def convert_messages_for_template(self, messages: list[Message]) -> list[Message]:
        """Assistant turns with tool calls become their raw text, so the template renders what the model said."""
        out = []
        for msg in messages:
            if msg.get("role") == "assistant" and msg.get("tool_calls"):
                raw = self.reconstruct_raw_text_from_tool_calls(msg["tool_calls"], msg.get("content"))
                out.append({"role": "assistant", "content": raw})
            else:
                out.append(msg)
        return out

    def decode_with_tool_awareness(self, token_ids: list[int], has_tools: bool = False) -> str:
        """Decode keeping special tokens when tools are active (tool markup may be special tokens)."""
        text: str = self.tokenizer.decode(token_ids, skip_special_tokens=not has_tools)
        return text


class HermesManagedServer(ManagedServer):  # type: ignore[misc]  # atroposlib ships no py.typed: Any base
    """ManagedServer whose tool-call translation uses the hermes-envs parser named ``tool_parser``."""

    def __init__(
        self, server: Any, tokenizer: Any = None, tool_parser: str = "hermes", **kwargs: Any
    ) -> None:
        super().__init__(server=server, tokenizer=tokenizer, tool_parser=tool_parser, **kwargs)
        self._hermes_translator: ParserTranslator | None = None

    def _get_translator(self) -> ParserTranslator | None:
        if self._hermes_translator is None and self._tool_parser_name and self.tokenizer is not None:
            self._hermes_translator = ParserTranslator(self.tokenizer, self._tool_parser_name)
        return self._hermes_translator


def pick_server(server_manager: object) -> object:
    """The healthy server with the most free slots (ServerManager's own choice for managed_server)."""
    servers = list(getattr(server_manager, "servers", []))
    healthy = [s for s in servers if getattr(s, "server_healthy", True)] or servers
    return max(healthy, key=lambda s: getattr(getattr(s, "sem", None), "_value", 0))
