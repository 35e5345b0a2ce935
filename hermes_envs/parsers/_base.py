"""The tool-call parser base class."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from hermes_envs.parsers._engine import fast_parse
from hermes_envs.parsers._errors import ParserArgumentError
from hermes_envs.parsers._result import ParseResult
from hermes_envs.parsers._types import ParsedPair, ToolCallLike, ToolSchema

__all__ = ["ToolCallParser", "check_arguments"]


class ToolCallParser:
    """Reads tool calls out of a model's raw text, and writes them back in the same format.

    Subclasses implement :meth:`_parse` (returning a :class:`ParseResult`) and :meth:`render`. ``parse`` and
    ``parse_detailed`` never raise on any text: an unexpected failure is reported in ``errors`` and the text is
    returned as content, exactly as if it held no call. A wrong *argument* (text that is not a ``str``, ``tools``
    that is not a list of tool schemas) raises :class:`ParserArgumentError` (a ``TypeError``) instead: reading on
    without the schemas the caller meant would type the arguments wrongly without anyone noticing.

    A subclass written the upstream way, overriding only ``parse(self, text)`` to return ``(content, tool_calls)``,
    works too: ``parse_detailed`` then calls that ``parse``.
    """

    name: ClassVar[str] = ""
    #: The plain-text fast path of :meth:`parse_detailed`: strings one of which every call, and every text
    #: :meth:`_parse` would report a problem in, contains (:meth:`_report_markers`). A text holding none of them
    #: comes back as ``(text, None)`` after one ``in`` test per string, before any other pass.
    _no_call_without: tuple[str, ...] = ()
    #: The same for :meth:`parse`, which returns no problems: strings every *call* contains (:meth:`_call_markers`).
    _no_call_in_parse: tuple[str, ...] = ()

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        """Strings one of which every call contains, worked out from the class's grammar; () for no fast path.
        A class that overrides ``_parse`` (or ``parse``) gets none unless it overrides this too."""
        return ()

    @classmethod
    def _report_markers(cls) -> tuple[str, ...]:
        """Strings one of which every call and every reported problem contains (default: :meth:`_call_markers`)."""
        return cls._call_markers()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        own_parse = cls.__dict__.get("parse")
        if own_parse is not None and "_parse" not in cls.__dict__:
            cls._parse = _parse_via_parse  # type: ignore[method-assign]
        # the markers describe the grammar of the class that declared them: a reading defined below it (its own
        # _parse, or parse written upstream's way) gets no fast path
        grammar, calls, reports = (_owner(cls, n) for n in ("_parse", "_call_markers", "_report_markers"))
        ours = issubclass(calls, grammar)
        cls._no_call_in_parse = cls._call_markers() if ours else ()
        ours = ours and issubclass(calls if reports is ToolCallParser else reports, grammar)
        cls._no_call_without = cls._report_markers() if ours else ()
        inherited = cls.parse
        if own_parse is None and (
            inherited is ToolCallParser.parse or getattr(inherited, "_fast_path", False)
        ):
            cls.parse = fast_parse(cls._no_call_in_parse, ToolCallParser.parse)  # type: ignore[method-assign]

    def parse(self, text: str, tools: list[ToolSchema] | None = None) -> ParsedPair:
        """Return ``(content, tool_calls)``; plain text comes back as ``(text, None)`` unchanged."""
        markers = self._no_call_in_parse
        if markers and type(text) is str and (tools is None or type(tools) is list):
            for marker in markers:
                if marker in text:
                    break
            else:
                return text, None
        result = self.parse_detailed(text, tools)
        return result.content, result.tool_calls

    def parse_detailed(self, text: str, tools: list[ToolSchema] | None = None) -> ParseResult:
        """Like :meth:`parse`, plus the list of problems met (broken or cut-off calls, ignored text)."""
        if type(text) is not str or not (
            tools is None or type(tools) is list
        ):  # the usual call: no more checks
            check_arguments(self.name or type(self).__name__, text, tools)
        markers = self._no_call_without
        if markers:
            for marker in markers:
                if marker in text:
                    break
            else:
                return ParseResult(text, None)
        try:
            result = self._parse(text, tools)
        except Exception as exc:
            return ParseResult(
                text, None, [f"{self.name} parser failed unexpectedly: {type(exc).__name__}: {exc}"]
            )
        return result

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        raise NotImplementedError

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        """Return the text the model would emit for ``content`` followed by ``tool_calls``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def _owner(cls: type, name: str) -> type:
    """The class of ``cls``'s MRO that defines ``name``."""
    return next(klass for klass in cls.__mro__ if name in klass.__dict__)


def _parse_via_parse(self: ToolCallParser, text: str, tools: list[ToolSchema] | None) -> ParseResult:
    """``_parse`` of a subclass that overrides only ``parse`` (upstream's way): call it, keep its answer."""
    from hermes_envs.parsers.invoke import parse_with

    got = parse_with(self, text, tools)
    if isinstance(got, ParseResult):
        return got
    content, calls = got
    return ParseResult(content, list(calls) if calls else None)


def check_arguments(parser: str, text: object, tools: object) -> None:
    """Raise :class:`ParserArgumentError` unless ``text`` is a str and ``tools`` None or a list of tool schemas."""
    if not isinstance(text, str):
        raise ParserArgumentError(
            f"the text given to the {parser} parser should be a str; got {type(text).__name__} {text!r:.60}. "
            "Fix: pass the decoded model output (bytes: .decode('utf-8'))."
        )
    if tools is None or isinstance(tools, (list, tuple)):
        return
    raise ParserArgumentError(
        f"tools given to the {parser} parser should be None or a list of tool schemas (the request's OpenAI "
        f"'tools'); got {type(tools).__name__} {tools!r:.60}. Fix: pass tools=[{{'type': 'function', "
        "'function': {...}}, ...] or leave it out."
    )
