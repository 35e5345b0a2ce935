"""Turn an agent transcript into training tokens and masks (Phase 1: re-tokenized with the chat template).

The transcript is rendered once with the tokenizer's chat template; each assistant message's span is found by
rendering the prefix before it (with the generation prompt) and after it. Spans are tokenized separately, so an
assistant span's tokens are exactly the tokens the model is trained to produce; everything else is masked (-100).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from hermes_envs._json_types import JSONObject, Message

__all__ = ["MASKED", "managed_tokens", "tokenize_transcript", "transcript_spans"]

logger = logging.getLogger(__name__)

MASKED = -100


def _render(tokenizer: Any, messages: list[Message], tools: list[JSONObject] | None, gen: bool) -> str:
    if getattr(tokenizer, "chat_template", None):
        kwargs: JSONObject = {"tokenize": False, "add_generation_prompt": gen}
        if tools:
            kwargs["tools"] = tools
        text: str = tokenizer.apply_chat_template(messages, **kwargs)  # tokenize=False: the rendered text
        return text
    # No chat template: a plain, prefix-consistent rendering so training data still lines up.
    text = "".join(f"{m.get('role')}: {m.get('content') or ''}\n" for m in messages)
    return text + ("assistant: " if gen else "")


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False)) if text else []


def transcript_spans(
    tokenizer: Any, messages: list[Message], tools: list[JSONObject] | None = None
) -> list[tuple[str, bool]]:
    """Split the rendered transcript into ``(text, trained)`` spans; ``trained`` marks what the model generated."""
    full = _render(tokenizer, messages, tools, gen=False)
    spans: list[tuple[str, bool]] = []
    pos = 0
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        before = _render(tokenizer, messages[:i], tools, gen=True)
        after = _render(tokenizer, messages[: i + 1], tools, gen=False)
        if not (full.startswith(before) and full.startswith(after) and len(before) >= pos):
            logger.warning(
                "chat template is not prefix-consistent at message %d; masking from there on. "
                "Training data for this rollout keeps only earlier assistant turns.",
                i,
            )
            break
        spans.append((full[pos : len(before)], False))
        spans.append((full[len(before) : len(after)], True))
        pos = len(after)
    spans.append((full[pos:], False))
    return [(text, trained) for text, trained in spans if text]


def tokenize_transcript(
    tokenizer: Any, messages: list[Message], tools: list[JSONObject] | None = None
) -> tuple[list[int], list[int]]:
    """Return ``(tokens, masks)`` of equal length; masks hold the token id where trained and -100 elsewhere."""
    tokens: list[int] = []
    masks: list[int] = []
    for text, trained in transcript_spans(tokenizer, messages, tools):
        ids = _encode(tokenizer, text)
        tokens.extend(ids)
        masks.extend(ids if trained else [MASKED] * len(ids))
    return tokens, masks


def managed_tokens(managed_state: JSONObject | None) -> tuple[list[int], list[int], list[float]] | None:
    """Tokens, masks and logprobs of the last node of a ManagedServer state (Phase 2), or None when absent."""
    if not managed_state:
        return None
    nodes = managed_state.get("nodes") or []
    if not nodes:
        return None
    node = nodes[-1]
    get: Callable[[str], Any] = node.get if isinstance(node, dict) else lambda k: getattr(node, k)
    return list(get("tokens")), list(get("masked_tokens")), list(get("logprobs"))
