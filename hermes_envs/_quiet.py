"""Keep what libraries print out of a command's own output: ``captured(log, verbose)``.

Used by ``hermes-envs demo`` and ``hermes-envs check`` (kept apart from both so ``check`` imports nothing of the
demo).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from typing import TextIO

__all__ = ["captured"]


@contextlib.contextmanager
def captured(log: TextIO, verbose: bool) -> Iterator[None]:
    """Send what the libraries print and log (atroposlib's eval tables, the judge's fallback warnings) to ``log``,
    or let it through with ``verbose``: a passing demo should read as a summary, not as 200 lines of detail."""
    if verbose:
        yield
        return
    root = logging.getLogger()
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    saved = root.handlers[:]
    root.handlers = [handler]
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log), warnings.catch_warnings():
            warnings.simplefilter("default")

            def show(message, category, filename, lineno, file=None, line=None) -> None:
                log.write(warnings.formatwarning(message, category, filename, lineno, line))

            warnings.showwarning = show
            yield
    finally:
        root.handlers = saved
        log.flush()
