"""Event-loop watchdog: how long the loop went without running anything else, and whose code held it.

A ticker coroutine wakes every few milliseconds; the gap between two ticks is how long the loop was blocked. A
helper thread samples the loop thread's stack while a stall is in progress, so a finding can name the function and
line of the author's code that held the loop (``time.sleep``, a synchronous HTTP call, ``ctx.terminal`` ...).
Garbage-collection pauses are measured (``gc.callbacks``) and subtracted, and a stall with no author frame on the
stack, or inside a finalizer, is not counted: neither is the env's doing.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

_TICK = 0.01
_LIBRARY_ROOTS = tuple(
    str(Path(p).resolve())
    for p in {
        sysconfig.get_paths().get("stdlib", ""),
        sysconfig.get_paths().get("purelib", ""),
        sysconfig.get_paths().get("platlib", ""),
        str(Path(__file__).resolve().parents[1]),
    }
    if p
)


@dataclass(frozen=True)
class Stall:
    """The loop was blocked ``seconds`` during ``phase``; ``where`` is the author's frame, ``inner`` the innermost."""

    phase: str
    seconds: float
    where: str
    inner: str


def is_library_file(filename: str) -> bool:
    """True for the standard library, installed packages and hermes-envs itself (not the env author's code)."""
    if filename.startswith("<"):
        return True
    try:
        resolved = str(Path(filename).resolve())
    except OSError:
        return True
    return resolved.startswith(_LIBRARY_ROOTS) or "site-packages" in resolved


def _describe(frame: FrameType | None) -> tuple[str, str]:
    """(the innermost frame in the author's code, the innermost frame of all) as ``func (file:line)``."""
    inner = ""
    author = ""
    while frame is not None:
        code = frame.f_code
        name = getattr(code, "co_qualname", code.co_name)
        text = f"{name} ({Path(code.co_filename).name}:{frame.f_lineno})"
        if not inner:
            inner = text
        if code.co_name == "__del__" or code.co_filename.endswith("gc.py"):
            return "", inner  # garbage collection ran finalizers here: not the env's code
        if not author and not is_library_file(code.co_filename):
            author = text
            break
        frame = frame.f_back
    return author, inner


class LoopWatchdog:
    """Records stalls longer than ``threshold`` seconds while :meth:`watch` is active (one phase at a time)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.stalls: list[Stall] = []
        self._last = 0.0
        self._sample: tuple[str, str] | None = None
        self._stop = threading.Event()
        self._thread_id = 0
        self._gc_started = 0.0
        self._gc_seconds = (
            0.0  # time the collector ran since the last tick: a GC pause is not the env's doing
        )

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self._gc_seconds += time.perf_counter() - self._gc_started
            self._gc_started = 0.0

    def _sampler(self) -> None:
        while not self._stop.wait(_TICK * 2):
            if self._sample is None and time.perf_counter() - self._last > self.threshold:
                frame = sys._current_frames().get(self._thread_id)
                self._sample = _describe(frame)

    async def _ticker(self, phase: str) -> None:
        self._last = time.perf_counter()
        while True:
            await asyncio.sleep(_TICK)
            now = time.perf_counter()
            gap = now - self._last - _TICK
            self._record(phase, gap)
            self._last = now

    def _record(self, phase: str, gap: float) -> None:
        gap, self._gc_seconds = gap - self._gc_seconds, 0.0
        if gap > self.threshold:
            where, inner = self._sample or ("", "")
            if where:  # a stall with no author frame on the stack is not the env's doing
                self.stalls.append(Stall(phase, gap, where, inner))
        self._sample = None

    async def watch(self, phase: str, coro: object) -> object:
        """Await ``coro`` while measuring the loop's stalls."""
        self._thread_id = threading.get_ident()
        self._last = time.perf_counter()
        self._gc_seconds = 0.0
        gc.callbacks.append(self._on_gc)
        self._stop.clear()
        self._sample = None
        sampler = threading.Thread(target=self._sampler, name="hermes-loop-watchdog", daemon=True)
        ticker = asyncio.ensure_future(self._ticker(phase))
        sampler.start()
        try:
            return await coro  # type: ignore[misc]
        finally:
            # A stall right before the end is seen here: the ticker would be cancelled before it could run.
            self._record(phase, time.perf_counter() - self._last - _TICK)
            ticker.cancel()
            gc.callbacks.remove(self._on_gc)
            self._stop.set()
            sampler.join()
            try:
                await ticker
            except (asyncio.CancelledError, Exception):
                pass
