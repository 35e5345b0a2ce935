"""Scripts: what the fake server answers, turn by turn (a facade over the modules that hold them).

A :class:`Script` is an ordered list of :class:`Turn`. Turn *k* (1-based) answers a request whose messages already
hold *k-1* assistant messages, so every concurrent rollout of a group walks the same script independently. A script
may instead hold several keyed sub-scripts (``scripts:`` in YAML): the first whose regex is found in the request's
first user message (the item's prompt) serves that conversation.

YAML/JSON schema (every field optional unless noted)::

    turns:                       # or a bare list of turns at the top level
      - content: "text"          # str or null
        reasoning_content: "..."  # emitted as message.reasoning_content
        tool_calls:
          - name: terminal       # required
            arguments: {command: "ls"}   # mapping, or a JSON string (sent verbatim)
            id: call_1           # optional; generated when absent
        finish_reason: stop     # default: "tool_calls" when tool calls, else "stop"
        match:                   # conditions the request must meet, else it is a miss
          user: "regex"          # searched in the last user message
          tool_results: true     # the last message is (true) / is not (false) a tool result
          tool_result: "regex"   # searched in the tool results since the last assistant message
          tools_offered: [terminal]   # these tools are offered (or true/false: any tools offered)
          temperature: 0.0       # exact, or {min: 0, max: 0.5}
          model: "regex"         # full match on the request's model
        fault: 429               # or {kind: 429, retry_after: 1, times: 1}; see faults.py
        choices:                 # n>1: one entry per choice (cycled); each is a turn without match/fault
          - content: "a"
    scripts:                     # keyed scripts instead of turns
      "What is 6\\*7": {turns: [...]}    # regex searched in the first user message

Where things live: the data model and ``load_script`` in :mod:`.turns` (and :mod:`.tool_call`), the schema and
its error messages in :mod:`.script_schema`, YAML reading with line marks in :mod:`.script_yaml`, the request view
in :mod:`.view`.
"""

from __future__ import annotations

from ._tool_call import ToolCall
from ._turns import Match, Script, Turn, load_script, parse_script_text
from ._view import RequestView, text_of, tool_names

__all__ = [
    "Match",
    "RequestView",
    "Script",
    "ToolCall",
    "Turn",
    "load_script",
    "parse_script_text",
    "text_of",
    "tool_names",
]
