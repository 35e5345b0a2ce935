"""Capture of the log records an env emits while observed (setup() and evaluate() warnings name real causes)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def captured_log() -> Iterator[list[str]]:
    """Yields a list that collects the WARNING-and-above log messages emitted in the block (any logger)."""
    import logging

    records: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                records.append(f"{record.levelname} {record.name}: {record.getMessage()}"[:300])
            except Exception:  # a record whose message cannot be formatted: keep what we can
                records.append(f"{record.levelname} {record.name}: {record.msg!r}"[:300])

    handler = _Keep(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield records
    finally:
        root.removeHandler(handler)
