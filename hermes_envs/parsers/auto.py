"""The ``auto`` parser: pick the format from the model's chat template when one is known, else from the text.

With a tokenizer (``AutoParser(tokenizer=tok)``, or ``bind_tokenizer`` as Phase 2's ManagedServer does) or a chat
template string, the format the template writes tool calls in is chosen once, up front: that is the format the
model was trained to emit, and text in any other format is then not a call. Without one, each text is read in the
format whose marker appears first in it (trying the next format present when that one yields no call). Either way
``parse_detailed(...).format`` says which format was used (None: none applied), and ``chosen`` / ``why`` say what
the template decided.

For upstream hermes-agent's ``auto`` (local models that follow no format), upstream's last resort is kept too:
a fenced ``bash``/``sh``/``shell`` block in an answer with no call in any format is a ``terminal`` call with that
``command`` (``AutoParser(code_blocks=False)`` turns it off). An unlabelled fence is not a command: it is usually
code being shown.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from hermes_envs.parsers._types import ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    ParseResult,
    ToolCallParser,
    dumps,
    get_parser,
    make_tool_call,
    register_parser,
    skip_ws,
)

__all__ = ["AutoParser", "detect_format", "format_from_chat_template", "shell_blocks"]

logger = logging.getLogger(__name__)

# (format, markers that mean it) in the order ties are broken; the first marker found in the text decides
_TEXT_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("deepseek_v4", ("<｜DSML｜", "< | DSML |", "<|DSML|")),
    ("deepseek_v3_1", ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>")),
    ("kimi_k2", ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>", "<|tool_call_begin|>")),
    ("longcat", ("<longcat_tool_call>",)),
    ("mistral", ("[TOOL_CALLS]",)),
    ("llama3_json", ("<|python_tag|>",)),
    ("custom_xml", ("<tool_use>", "<parameter=tool_name>")),
    ("qwen3_coder", ("<function=",)),  # a bare call without <tool_call>
    ("hermes", ("<tool_call>",)),  # or qwen3_coder / glm47: see detect_format
)

# what a chat template writes when it renders an assistant's tool calls -> the format (checked in this order)
_TEMPLATE_MARKERS: tuple[tuple[str, str], ...] = (
    ("DSML", "deepseek_v4"),
    ("tool▁call▁begin", "deepseek_v3_1"),  # refined below: V3 writes "function<｜tool▁sep｜>" + ```json
    ("<|tool_calls_section_begin|>", "kimi_k2"),
    ("<longcat_tool_call>", "longcat"),
    ("[TOOL_CALLS]", "mistral"),
    ("<|python_tag|>", "llama3_json"),
    ("<arg_key>", "glm45"),  # refined below: GLM-4.7 writes no newline before <arg_key>
    ("<function=", "qwen3_coder"),
    ("<parameter=tool_name>", "custom_xml"),
    ("<tool_call>", "hermes"),
)


def format_from_chat_template(template: str | None) -> str | None:
    """The parser name for the tool-call format a chat template writes, or None when it writes none we know."""
    if not isinstance(template, str):
        return None
    for marker, name in _TEMPLATE_MARKERS:
        if marker in template:
            if name == "deepseek_v3_1" and "function<｜tool▁sep｜>" in template:
                return "deepseek_v3"
            if (
                name == "glm45"
                and "<arg_key>" in template
                and "\\n<arg_key>" not in template
                and "\n<arg_key>" not in template
            ):
                return "glm47"
            if name == "hermes" and "<function=" in template:
                return "qwen3_coder"
            return name
    # a template that renders tool calls as JSON after the header, with no special token (Llama 3.1 JSON mode)
    if '"parameters"' in template and "tool_calls" in template and "<|start_header_id|>" in template:
        return "llama3_json"
    return None


def detect_format(text: str) -> list[str]:
    """The formats whose markers occur in ``text``, the one whose marker comes first first.

    ``<tool_call>`` is shared by hermes (JSON follows), qwen3_coder (``<function=`` follows) and GLM (a name
    follows): what follows its first occurrence decides, and the other two are tried after every other format.
    """
    found: list[tuple[int, int, str]] = []
    for rank, (name, markers) in enumerate(_TEXT_MARKERS):
        at = min((p for p in (text.find(m) for m in markers) if p != -1), default=-1)
        if at != -1:
            found.append((at, rank, name))
    names = [name for _, _, name in sorted(found)]
    if "deepseek_v3_1" in names and "function<｜tool▁sep｜>" in text:
        names[names.index("deepseek_v3_1")] = "deepseek_v3"
    if "hermes" in names:
        at = text.find("<tool_call>")
        after = skip_ws(text, at + len("<tool_call>"))
        if text.startswith(("{", "["), after):
            family = ["hermes", "qwen3_coder", "glm47"]
        elif text.startswith("<function=", after):
            family = ["qwen3_coder", "hermes", "glm47"]
        else:
            family = ["glm47", "hermes", "qwen3_coder"]
        # the other two only when their own marker is there (trying a format that cannot match costs a parse)
        telltale = {"hermes": '"name"', "qwen3_coder": "<function=", "glm47": "<arg_key>"}
        later = [n for n in family[1:] if telltale[n] in text]
        i = names.index("hermes")
        names[i] = family[0]
        names = [n for n in names if n not in family[1:]] + [n for n in later if n not in names[:i]]
    if "llama3_json" not in names and '"name"' in text and "{" in text:
        names.append("llama3_json")  # bare JSON calls (upstream's raw-JSON fallback), after any marked format
    return list(dict.fromkeys(names))


_FENCE_OPEN = re.compile(r"[ \t]{0,3}```[ \t]*(bash|sh|shell|console)?[ \t]*\r?$")
_FENCE_CLOSE = re.compile(r"[ \t]{0,3}```[ \t]*\r?$")
# a line that opens a shell fence, searched for in the whole text at once: without one there is no command, and
# the line-by-line reading of shell_blocks (a few times the cost of a parse on fenced text) is skipped
_SHELL_FENCE_LINE = re.compile(r"^[ \t]{0,3}```[ \t]*(?:bash|sh|shell|console)[ \t]*\r?$", re.MULTILINE)


def shell_blocks(text: str) -> tuple[list[str], str]:
    """The commands of the closed ``bash``/``sh``/``shell``/``console`` fences in ``text``, and the text without them.

    Read line by line in one pass (a regex over the whole text would rescan from every unclosed fence).
    """
    commands: list[str] = []
    kept: list[str] = []
    block: list[str] | None = None
    opening = ""
    shell = False
    for line in text.split("\n"):
        if block is None:
            match = _FENCE_OPEN.match(line)
            if match is not None:
                block, opening, shell = [], line, match.group(1) is not None
            else:
                kept.append(line)
        elif _FENCE_CLOSE.match(line):
            if shell and "\n".join(block).strip():
                commands.append("\n".join(block).strip())
            else:
                kept += [opening, *block, line]
            block = None
        else:
            block.append(line)
    if block is not None:  # unclosed: not a command
        kept += [opening, *block]
    return commands, "\n".join(kept)


def _template_of(tokenizer: object) -> str | None:
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):  # several named templates: the tool-use one, else the default
        template = template.get("tool_use") or template.get("default") or next(iter(template.values()), None)
    if isinstance(template, list):  # [{"name": ..., "template": ...}] as in tokenizer_config.json
        picked = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = picked.get("tool_use") or picked.get("default")
    if not isinstance(template, str):
        get = getattr(tokenizer, "get_chat_template", None)
        if callable(get):
            try:
                template = get()
            except Exception:  # no template, or one that needs arguments: fall back to reading the text
                template = None
    return template if isinstance(template, str) else None


@register_parser("auto")
class AutoParser(ToolCallParser):
    """Chooses the format from the chat template (when given) or from each text, and says which it used."""

    def __init__(
        self, tokenizer: object = None, chat_template: str | None = None, *, code_blocks: bool = True
    ) -> None:
        self.code_blocks = code_blocks
        self.chosen: str | None = None
        self.why = "no chat template given: the format is read from each text"
        self._parsers: dict[str, ToolCallParser] = {}
        if chat_template is not None or tokenizer is not None:
            self.bind_tokenizer(tokenizer, chat_template)

    def bind_tokenizer(self, tokenizer: object = None, chat_template: str | None = None) -> str | None:
        """Choose the format from the tokenizer's (or the given) chat template; return it (None: unknown)."""
        template = chat_template if chat_template is not None else _template_of(tokenizer)
        chosen = format_from_chat_template(template)
        if chosen is not None:
            self.chosen, self.why = chosen, f"the chat template writes tool calls in the {chosen} format"
            logger.info("tool_call_parser 'auto' chose %r from the chat template", chosen)
        elif template is not None:
            self.chosen = None
            self.why = (
                "the chat template writes no tool-call format we know: the format is read from each text"
            )
        return self.chosen

    def _parser(self, name: str) -> ToolCallParser:
        parser = self._parsers.get(name)
        if parser is None:
            parser = self._parsers[name] = get_parser(name)
        return parser

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        names = [self.chosen] if self.chosen is not None else detect_format(text)
        errors: list[str] = []
        for name in names:
            result = self._parser(name).parse_detailed(text, tools)
            if result.tool_calls:
                result.format = name
                return result
            errors += [f"read as {name}: {e}" for e in result.errors]
        if self.code_blocks and "```" in text and _SHELL_FENCE_LINE.search(text) is not None:
            commands, rest = shell_blocks(text)
            if commands:
                calls = [make_tool_call("terminal", dumps({"command": c})) for c in commands]
                return ParseResult(rest.strip() or None, calls, errors, format="code_blocks")
        return ParseResult(text, None, errors)

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        """Write the calls in the chosen format (hermes when none was chosen: ``auto`` reads it back)."""
        return self._parser(self.chosen or "hermes").render(content, tool_calls)

    def __repr__(self) -> str:
        return f"<AutoParser {'chose ' + repr(self.chosen) if self.chosen else 'reads the format from the text'}>"
