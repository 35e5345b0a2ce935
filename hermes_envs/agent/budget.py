"""The tool-result budget: how much of a tool's output goes into the transcript, per call and per turn.

Same contract as upstream's ``BudgetConfig`` (our own code): a result longer than its tool's threshold is saved
to a file in the rollout's sandbox (when it has one) and replaced by a preview that says where the full text is;
after a turn's tool calls, when their results together exceed ``turn_budget`` characters, the largest results are
replaced the same way until the turn fits. ``read_file`` is never cut (reading a saved result back must not be
saved again). Without a sandbox to save into, the result is cut to the preview and the note says so.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field

from hermes_envs._json_types import Message

logger = logging.getLogger(__name__)

#: Upstream's current defaults (characters; its ``tools.budget_config``, which lowered them from 100 000 / 200 000).
DEFAULT_RESULT_SIZE_CHARS = 32_768
DEFAULT_TURN_BUDGET_CHARS = 65_536
DEFAULT_PREVIEW_SIZE_CHARS = 1_500
#: Per-result threshold of MCP tools (names starting ``mcp_``), never above ``default_result_size``.
DEFAULT_MCP_RESULT_SIZE_CHARS = 50_000
MCP_TOOL_PREFIX = "mcp_"
#: Tools whose results are never cut, whatever the overrides say.
PINNED_THRESHOLDS: dict[str, float] = {"read_file": math.inf}
#: A result is saved whole up to this size; a larger one keeps only its first part on disk too.
MAX_SAVED_CHARS = 20_000_000
#: Marks a result that was already replaced (so the turn budget never replaces it twice).
SAVED_TAG = "<persisted-output>"
SAVED_END_TAG = "</persisted-output>"
RESULTS_DIR = ".hermes-results"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class BudgetConfig:
    """Per-result threshold (``resolve_threshold``), per-turn total (``turn_budget``) and preview length."""

    default_result_size: int = DEFAULT_RESULT_SIZE_CHARS
    turn_budget: int = DEFAULT_TURN_BUDGET_CHARS
    preview_size: int = DEFAULT_PREVIEW_SIZE_CHARS
    mcp_result_size: int = DEFAULT_MCP_RESULT_SIZE_CHARS
    tool_overrides: dict[str, int] = field(default_factory=dict)

    def resolve_threshold(self, tool_name: str) -> float:
        """Characters a result of ``tool_name`` may have: pinned, else the override, else (an ``mcp_`` tool) the
        MCP size, else the tool's own size; both capped at ``default_result_size``."""
        if tool_name in PINNED_THRESHOLDS:
            return PINNED_THRESHOLDS[tool_name]
        if tool_name in self.tool_overrides:
            return self.tool_overrides[tool_name]
        if tool_name.startswith(MCP_TOOL_PREFIX):
            return min(self.mcp_result_size, self.default_result_size)
        own = self.tool_size(tool_name)
        return own if own == math.inf else min(own, self.default_result_size)

    def tool_size(self, tool_name: str) -> float:
        """The size a tool declares for its own results (upstream's registry value); the default here."""
        return self.default_result_size


DEFAULT_BUDGET = BudgetConfig()

#: Characters per token assumed when scaling to a context window (upstream's estimate).
CHARS_PER_TOKEN = 4
_PER_RESULT_WINDOW_FRACTION = 0.15
_PER_TURN_WINDOW_FRACTION = 0.30
_MIN_RESULT_SIZE_CHARS = 8_000
_MIN_TURN_BUDGET_CHARS = 16_000


def budget_for_context_window(
    context_length: int | None, *, base: BudgetConfig = DEFAULT_BUDGET
) -> BudgetConfig:
    """A budget scaled to a model's context window of ``context_length`` tokens: one result may take 15% of the
    window and one turn's results 30%, never more than the defaults and never less than 8 000 / 16 000 characters.
    No (or a non-positive) window gives ``base`` itself."""
    if not context_length or context_length <= 0:
        return base
    window = context_length * CHARS_PER_TOKEN
    return type(base)(
        default_result_size=max(
            _MIN_RESULT_SIZE_CHARS, min(int(window * _PER_RESULT_WINDOW_FRACTION), DEFAULT_RESULT_SIZE_CHARS)
        ),
        turn_budget=max(
            _MIN_TURN_BUDGET_CHARS, min(int(window * _PER_TURN_WINDOW_FRACTION), DEFAULT_TURN_BUDGET_CHARS)
        ),
        preview_size=DEFAULT_PREVIEW_SIZE_CHARS,
        mcp_result_size=base.mcp_result_size,
    )


def preview(content: str, max_chars: int) -> tuple[str, bool]:
    """The first ``max_chars`` characters, cut at the last line break when one is in the second half."""
    if len(content) <= max_chars:
        return content, False
    cut = content.rfind("\n", 0, max_chars)
    end = cut + 1 if cut > max_chars // 2 else max_chars
    return content[:end], True


def _file_name(call_id: str) -> str:
    stem = _UNSAFE.sub("_", str(call_id or "tool_result")).strip("._-")[:120] or "tool_result"
    return f"{stem}.txt"


def _save(content: str, call_id: str, task_id: str | None) -> tuple[str | None, bool]:
    """Write ``content`` into the task's sandbox; ``(relative path, whole)`` or ``(None, False)``."""
    if not task_id:
        return None, False
    try:
        from hermes_envs.tools.sandbox import get_sandbox

        box = get_sandbox(task_id, create=False)
        if box is None or box.closed:
            return None, False
        whole = len(content) <= MAX_SAVED_CHARS
        path = f"{RESULTS_DIR}/{_file_name(call_id)}"
        box.write_text(path, content if whole else content[:MAX_SAVED_CHARS])
        return path, whole
    except Exception:  # a full disk or a closed sandbox: fall back to cutting inline
        logger.warning("could not save a large tool result of task %s", task_id, exc_info=True)
        return None, False


def shrink(
    content: str,
    tool_name: str,
    call_id: str,
    task_id: str | None,
    config: BudgetConfig,
    limit: float | None = None,
) -> str:
    """Replace ``content`` by a preview plus where the full text is (or that it was cut), saving it first.

    The preview has ``preview_size`` characters, or fewer when the tool's threshold (``limit``) is smaller.
    """
    head, more = preview(content, int(min(config.preview_size, limit if limit is not None else math.inf)))
    path, whole = _save(content, call_id, task_id)
    size = f"{len(content):,} characters"
    if path is None:
        return (
            f"{head}\n\n[Truncated: the {tool_name} result was {size}; only the first {len(head):,} are shown "
            "and the rest could not be saved.]"
        )
    saved = "Full output saved to" if whole else f"First {MAX_SAVED_CHARS:,} characters saved to"
    return (
        f"{SAVED_TAG}\nThis tool result was too large ({size}).\n{saved}: {path}\n"
        "Use the read_file tool with offset and limit to read parts of it.\n\n"
        f"Preview (first {len(head):,} chars):\n{head}{chr(10) + '...' if more else ''}\n{SAVED_END_TAG}"
    )


def fit_result(content: str, tool_name: str, call_id: str, task_id: str | None, config: BudgetConfig) -> str:
    """Per call: ``content`` as is when within its tool's threshold, else shrunk."""
    threshold = config.resolve_threshold(tool_name)
    if threshold == math.inf or len(content) <= threshold:
        return content
    return shrink(content, tool_name, call_id, task_id, config, threshold)


def fit_turn(
    tool_messages: list[Message], names: list[str], task_id: str | None, config: BudgetConfig
) -> None:
    """Per turn: shrink the largest results (in place) until the turn's tool results fit ``turn_budget``."""
    sizes = [len(str(m.get("content") or "")) for m in tool_messages]
    total = sum(sizes)
    if total <= config.turn_budget:
        return
    order = sorted(range(len(tool_messages)), key=lambda i: sizes[i], reverse=True)
    for i in order:
        if total <= config.turn_budget:
            break
        content = str(tool_messages[i].get("content") or "")
        if SAVED_TAG in content or PINNED_THRESHOLDS.get(names[i]) == math.inf:
            continue
        replacement = shrink(content, names[i], str(tool_messages[i].get("tool_call_id", i)), task_id, config)
        if len(replacement) < len(content):
            tool_messages[i]["content"] = replacement
            total += len(replacement) - len(content)
