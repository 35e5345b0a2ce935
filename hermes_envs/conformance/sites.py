"""Where in the author's code something happened: the deepest traceback frame outside hermes-envs and libraries.

Findings name the author's own line (``env.py:42: return item["answer"]``), never a frame of ours.
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

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
