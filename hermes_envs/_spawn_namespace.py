"""Which network namespace a process started now would be in: the pre-started sandbox shells are handed only to a
task whose own shell would have started in the same one.

The network guard (testing layer) moves the thread that starts a process into its loopback-only namespace while an
isolating guard is active. It registers a probe here before it can switch any thread (:func:`set_probe`); the sandbox
pool (core) asks :func:`expected` and compares it with what the kernel said when the spare's shell was forked
(:func:`of_this_thread`). Without a probe no thread ever changes namespace, so every shell shares the process's.
Standard library only: both layers import it at no cost.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator

__all__ = ["UNKNOWN", "expected", "fits", "kept_probe", "of_this_thread", "set_probe"]

#: What a probe answers when it cannot tell (switching failed midway): matches no shell.
UNKNOWN = "unknown"

_PROBE: list[Callable[[], str | None]] = []


def set_probe(probe: Callable[[], str | None]) -> None:
    """Install ``probe``: the id (as :func:`of_this_thread` spells it) of the namespace a process started now gets,
    ``None`` while no thread switches. The last one installed answers."""
    _PROBE[:] = [probe]


@contextlib.contextmanager
def kept_probe() -> Iterator[None]:
    """Put back the probe installed before the block (or none) when it ends, whatever :func:`set_probe` did inside:
    for tests that install their own."""
    before = list(_PROBE)
    try:
        yield
    finally:
        _PROBE[:] = before


def expected() -> str | None:
    """The namespace a process started now would be in; ``None`` while this process switches no namespace."""
    return _PROBE[0]() if _PROBE else None


def of_this_thread() -> str:
    """The calling thread's network namespace (``net:[4026531840]``); :data:`UNKNOWN` when /proc cannot say."""
    try:
        return os.readlink("/proc/thread-self/ns/net")
    except OSError:
        return UNKNOWN


def fits(recorded: str | None) -> bool:
    """True when a shell forked in namespace ``recorded`` (``None``: a backend whose pre-started state lives in no
    namespace of ours) may serve a task starting now."""
    if recorded is None:
        return True
    want = expected()
    if want is None:
        return True
    return want != UNKNOWN and recorded == want
