"""Where in the author's code something happened: the deepest traceback frame outside hermes-envs and libraries.

Findings name the author's own line (``env.py:42: return item["answer"]``), never a frame of ours.
"""

from __future__ import annotations

import gc
import sys
import sysconfig
import traceback
from pathlib import Path
from typing import Any

__all__ = ["BUG_TYPES", "RaisedInAuthorCode", "author_site", "current_frames", "is_author_file"]

_LIBRARY_DIRS = tuple(
    str(Path(p).resolve()) for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]}
)
_OURS = str(Path(__file__).resolve().parents[1])


def is_author_file(filename: str) -> bool:
    """True for a file of the env's author: not hermes-envs, not the standard library, not an installed package."""
    if not filename or filename.startswith("<"):
        return False
    resolved = str(Path(filename).resolve())
    if resolved.startswith(_OURS) or "site-packages" in resolved:
        return False
    return not resolved.startswith(_LIBRARY_DIRS)


def author_site(exc: BaseException, path: Path | None = None) -> str:
    """``file:line: code`` of the deepest frame in the author's code (``path`` preferred), or ``""``."""
    frames = traceback.extract_tb(exc.__traceback__)
    if path is not None:
        for frame in reversed(frames):
            if Path(frame.filename).resolve() == Path(path).resolve():
                return f"{Path(frame.filename).name}:{frame.lineno}: {(frame.line or '').strip()}"
    for frame in reversed(frames):
        if is_author_file(frame.filename):
            return f"{Path(frame.filename).name}:{frame.lineno}: {(frame.line or '').strip()}"
    return ""


#: Exception types that mean a bug in the code that raised them (not a parse of the model's text failing, which
#: raises ValueError, or a file the model did not write, an OSError): caught and turned into a score, they hide it.
BUG_TYPES: tuple[type[BaseException], ...] = (
    AttributeError,
    TypeError,
    NameError,
    KeyError,
    IndexError,
    ZeroDivisionError,
    RecursionError,
    ImportError,
    NotImplementedError,
)


class RaisedInAuthorCode:
    """Records the exceptions raised in the author's code while the block runs (``sys.settrace``), so one that a
    ``try/except`` swallowed is still seen: ``raised`` holds ``(exception, "file:line: code")`` in raise order.

    Only frames of the author's files are traced (a code object's file is judged once), so the cost is small."""

    def __init__(self) -> None:
        self.raised: list[tuple[BaseException, str]] = []
        self._seen: set[int] = set()
        self._author: dict[Any, bool] = {}
        self._previous: Any = None

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        author = self._author.get(code)
        if author is None:
            author = self._author[code] = is_author_file(code.co_filename)
        if not author:
            return None
        frame.f_trace_lines = False  # only the 'exception' events are wanted: no per-line cost
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "exception":
            exc = arg[1]
            if isinstance(exc, BaseException) and id(exc) not in self._seen:
                self._seen.add(id(exc))
                import linecache

                line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
                self.raised.append((exc, f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}: {line}"))
        return self._local

    def __enter__(self) -> RaisedInAuthorCode:
        import sys

        self._previous = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: object) -> None:
        import sys

        sys.settrace(self._previous)

    def swallowed(self, escaped: BaseException | None) -> list[tuple[BaseException, str]]:
        """The bug-type exceptions raised in the author's code that did not escape the block (caught there)."""
        return [(e, where) for e, where in self.raised if isinstance(e, BUG_TYPES) and e is not escaped]


def current_frames() -> dict[int, Any]:
    """``sys._current_frames()`` with the garbage collector held off while it runs.

    On CPython 3.11 it makes frame objects while holding the interpreter's thread-list lock; a collection started
    by one of those allocations that frees a ``threading.local`` (tenacity's retry objects hold one) takes the same
    lock again, and the process deadlocks holding the GIL (seen: the HC408 sampler froze a whole test run).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if enabled:
            gc.enable()
