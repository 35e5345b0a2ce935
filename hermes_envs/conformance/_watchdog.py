"""Event-loop watchdog: how long the loop went without running anything else, and whose code held it.

A ticker coroutine wakes every few milliseconds; the gap between two ticks is how long the loop was blocked. A
helper thread samples the loop thread's stack while a stall is in progress, so a finding can name the function and
line of the author's code that held the loop (``time.sleep``, a synchronous HTTP call, ``ctx.terminal`` ...).
Garbage-collection pauses are measured (``gc.callbacks``) and subtracted, and a stall with no author frame on the
stack, or inside a finalizer, is not counted: neither is the env's doing.

Calls that block the thread by their nature are seen however short: ``time.sleep`` (wrapped while a phase is
watched, with the names the author's modules bound to it: Python 3.11 raises no audit event for it) and, through an audit hook, a connect on a blocking socket
(``requests``, a sync HTTP client) made by the author's code on the watched loop thread.
No machine's load makes code call them, so each is a fact, not a measurement.

The time the loop thread spends inside ``ToolContext``'s synchronous methods (``ctx.terminal`` ...) is measured too,
and each stall says how much of it was spent there: that API is the contract's (upstream's blocks the loop the same
way), so HC408 words such a stall as a warning naming the awaitable twins, and keeps other blocking an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import os
import sys
import sysconfig
import threading
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import Any, SupportsIndex, TypeVar

T = TypeVar("T")

__all__ = ["BlockingCall", "LoopWatchdog", "SYNC_TOOL_METHODS", "Stall", "is_library_file"]

_TICK = 0.01
#: ToolContext's synchronous methods (the contract's API); each has an awaitable twin named ``a<name>``.
SYNC_TOOL_METHODS = (
    "terminal",
    "read_file",
    "write_file",
    "upload_file",
    "upload_dir",
    "download_file",
    "download_dir",
    "search",
    "call_tool",
    "cleanup",
)
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


class _Sampler:
    """The one helper thread of the process that samples the watched loops' stacks (see :meth:`LoopWatchdog.watch`).

    It is started once and idles while nothing is watched: a thread started and joined per watched call (a check
    run makes hundreds) cost more than the calls themselves on a loaded machine, where a new thread waits its turn
    for a CPU before ``Thread.start`` returns.
    """

    def __init__(self) -> None:
        self._watched: dict[int, LoopWatchdog] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._cpus: set[int] | None = None

    def add(self, dog: LoopWatchdog) -> None:
        with self._changed:
            self._watched[id(dog)] = dog
            if self._thread is None or not self._thread.is_alive():  # first use, or a forked child
                self._thread = threading.Thread(target=self._run, name="hermes-loop-watchdog", daemon=True)
                self._thread.start()
                self._cpus = None
            self._follow_cpus()
            self._changed.notify()

    def _follow_cpus(self) -> None:
        """Keep the sampler on the CPUs the watched thread may use, as a thread it started would be: the per-call
        sampler this replaces inherited them, so a loop pinned to one CPU (the runqueue test) is watched as
        before, by a sampler sharing its CPU."""
        getaffinity = getattr(os, "sched_getaffinity", None)
        if getaffinity is None or self._thread is None or self._thread.native_id is None:
            return
        try:
            cpus = getaffinity(0)
            if cpus != self._cpus:
                os.sched_setaffinity(self._thread.native_id, cpus)
                self._cpus = cpus
        except OSError:  # the thread just ended, or the platform refuses: sampling still works
            pass

    def remove(self, dog: LoopWatchdog) -> None:
        with self._changed:
            self._watched.pop(id(dog), None)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._watched:
                    self._changed.wait()
                dogs = list(self._watched.values())
            for dog in dogs:
                dog._maybe_sample()
            time.sleep(_TICK * 2)


_SAMPLER = _Sampler()


@dataclass(frozen=True)
class Stall:
    """The loop was blocked ``seconds`` during ``phase``; ``where`` is the author's frame, ``inner`` the innermost.

    ``sync_tool_seconds`` of the stall were spent inside ToolContext's synchronous methods ``sync_tool_calls``.
    """

    phase: str
    seconds: float
    where: str
    inner: str
    sync_tool_seconds: float = 0.0
    sync_tool_calls: tuple[str, ...] = ()
    #: Seconds of the stall the loop thread spent on a CPU (Linux schedstat), or None where it cannot be read: a
    #: stall the env computed through is CPU time; a sleep / synchronous I/O is not, and neither is the machine.
    cpu_seconds: float | None = None


@dataclass(frozen=True)
class BlockingCall:
    """A call that blocks the thread (``time.sleep(0.002)``, a blocking socket's connect) made by the author's code
    on the loop thread during ``phase``; ``where``: the author's frame, ``func (file:line)``."""

    phase: str
    what: str
    where: str


#: The watchdogs whose loop thread the audit hook watches (a hook cannot be removed: it is installed once).
_AUDITED: set[LoopWatchdog] = set()
_HOOKED = False


def _blocking_call(event: str, args: tuple[Any, ...]) -> str | None:
    """What the audited call blocks on, or None when it does not block (no sleep, a non-blocking socket)."""
    if event == "time.sleep":
        return (
            f"time.sleep({args[0]:g})" if args and isinstance(args[0], (int, float)) and args[0] > 0 else None
        )
    if event == "socket.connect" and args:
        try:
            blocking = args[0].gettimeout() != 0.0
        except Exception:
            return None
        return f"a blocking socket connect to {args[1]!r}" if blocking and len(args) > 1 else None
    return None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _AUDITED or event not in ("time.sleep", "socket.connect"):
        return
    _note(event, args)


def _blocking_site(frame: FrameType | None, direct: bool) -> str:
    """``func (file:line)`` of the author's code that made a blocking call from ``frame`` (its caller), or "" when
    the call is hermes-envs' own (a sync ToolContext method HC408 words as a warning) or a library's alone. With
    ``direct``, the author's code must be the caller itself (a sleep inside a library is the library's business)."""
    while frame is not None:
        code = frame.f_code
        if _is_loop_iteration(code):
            return ""
        if not is_library_file(code.co_filename):
            return f"{getattr(code, 'co_qualname', code.co_name)} ({Path(code.co_filename).name}:{frame.f_lineno})"
        if code.co_filename.startswith(_INSTRUMENTATION):
            frame = frame.f_back  # the kit's own wrappers of socket calls (the network guard) are transparent
            continue
        if direct or code.co_filename.startswith(_OURS):
            return ""
        frame = frame.f_back
    return ""


_REAL_SLEEP = time.sleep


def _sleep(secs: float | SupportsIndex) -> None:
    """time.sleep while a phase is watched: noted when the author's code calls it on the loop thread."""
    if _AUDITED:
        _note("time.sleep", (secs,))
    _REAL_SLEEP(secs)


#: The author's modules (their files are not a library's nor ours), found when sys.modules grew; the count of
#: sys.modules they were found at. Scanning every module on each watched phase cost more than the phases.
_AUTHORS: list[ModuleType] = []
_SCANNED = [0]
#: (module globals, name) rebound from time.sleep to the wrapper while a phase is watched.
_REBOUND: list[tuple[dict[str, Any], str]] = []


@functools.cache
def _authors_file(filename: str) -> bool:
    return not is_library_file(filename)


def _bound_sleeps() -> list[tuple[dict[str, Any], str]]:
    """Globals of the author's modules bound to time.sleep itself (``from time import sleep``, done before the kit
    watched anything): replacing ``time.sleep`` does not reach them, so they are rebound while a phase is watched."""
    if len(sys.modules) != _SCANNED[0]:
        modules = list(sys.modules.values())
        _AUTHORS[:] = [
            m for m in modules if isinstance(getattr(m, "__file__", None), str) and _authors_file(m.__file__)
        ]
        _SCANNED[0] = len(modules)
    found: list[tuple[dict[str, Any], str]] = []
    for module in _AUTHORS:
        namespace = getattr(module, "__dict__", {})
        found += [(namespace, key) for key, value in list(namespace.items()) if value is _REAL_SLEEP]
    return found


def _wrap_sleep() -> None:
    time.sleep = _sleep
    for namespace, key in _bound_sleeps():
        namespace[key] = _sleep
        _REBOUND.append((namespace, key))


def _unwrap_sleep() -> None:
    if time.sleep is _sleep:
        time.sleep = _REAL_SLEEP
    for namespace, key in _REBOUND:
        if namespace.get(key) is _sleep:
            namespace[key] = _REAL_SLEEP
    _REBOUND.clear()


def _note(event: str, args: tuple[Any, ...]) -> None:
    me = threading.get_ident()
    for dog in list(_AUDITED):
        if dog._thread_id != me or len(dog.blocking) >= 50:
            continue
        what = _blocking_call(event, args)
        if what is None:
            return
        author = _blocking_site(sys._getframe(2), direct=event == "time.sleep")
        if author:
            dog.blocking.append(BlockingCall(dog._phase, what, author))


def _schedstat(native_id: int) -> tuple[float, float] | None:
    """(seconds on a CPU, seconds runnable but waiting for one) of the thread, from Linux schedstat, or None."""
    try:
        with open(f"/proc/self/task/{native_id}/schedstat", "rb") as fh:
            fields = fh.read().split()
        return int(fields[0]) / 1e9, int(fields[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _runqueue_seconds(native_id: int) -> float | None:
    """Seconds the thread spent runnable but waiting for a CPU (Linux ``/proc/.../schedstat``, field 2), or None.

    On a loaded machine (CI shares two cores) a loop can go 0.5 s without a tick because the OS ran other
    processes: that wait is the machine's, not the env's, and is subtracted from a stall like a GC pause.
    """
    try:
        with open(f"/proc/self/task/{native_id}/schedstat", "rb") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def is_library_file(filename: str) -> bool:
    """True for the standard library, installed packages and hermes-envs itself (not the env author's code)."""
    if filename.startswith("<"):
        return True
    try:
        resolved = _resolved(filename)
    except (OSError, ValueError):
        return True
    return resolved.startswith(_LIBRARY_ROOTS) or "site-packages" in resolved


def _resolved(filename: str) -> str:
    """``filename`` with symlinks resolved, as ``os.path.realpath`` gives it. The folder is resolved once per
    folder: the first scan of ``sys.modules`` (~2,000 files in a few hundred folders) resolved every path component
    of every file again (~0.5 s of CPU per check run)."""
    if not os.path.isabs(filename) or ".." in filename or os.path.islink(filename):
        return os.path.realpath(filename)
    folder, name = os.path.split(filename)
    return os.path.join(_real_folder(folder), name)


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def _is_loop_iteration(code: CodeType) -> bool:
    """The event loop's own "run one iteration" frame: what is above it started the loop, it does not hold it."""
    return code.co_name == "_run_once" and code.co_filename.endswith(("base_events.py", "uvloop/loop.pyx"))


def _describe(frame: FrameType | None) -> tuple[str, str]:
    """(the innermost frame in the author's code, the innermost frame of all) as ``func (file:line)``.

    Only frames the loop is running count: walking out from the innermost frame stops at the loop's iteration
    frame, so a loop idle in ``selector.select`` (a process the OS did not schedule on a loaded machine) or the
    code that called ``asyncio.run`` is never blamed.
    """
    inner = ""
    author = ""
    while frame is not None:
        code = frame.f_code
        if _is_loop_iteration(code):
            return "", inner or "the event loop waiting for I/O"
        name = getattr(code, "co_qualname", code.co_name)
        text = f"{name} ({Path(code.co_filename).name}:{frame.f_lineno})"
        if not inner and code.co_filename != __file__:  # (this module's time.sleep wrapper is not the place)
            inner = text
        if code.co_name == "__del__" or code.co_filename.endswith("gc.py"):
            return "", inner  # garbage collection ran finalizers here: not the env's code
        if not author and not is_library_file(code.co_filename):
            author = text
            break
        frame = frame.f_back
    return author, inner


_CONFORMANCE = str(Path(__file__).resolve().parent)
_OURS = str(Path(__file__).resolve().parents[1])
_INSTRUMENTATION = str(Path(__file__).resolve().parents[1] / "testing" / "_network_guard.py")


def _caller_file(frame: FrameType | None) -> str:
    """The file of the code that called a ToolContext method, past the kit's own instrumentation of it (the
    conformance package wraps ctx methods to record paths): the env's file, or the kit helper that called it."""
    while frame is not None and frame.f_code.co_filename.startswith(_CONFORMANCE):
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else "<unknown>"


class LoopWatchdog:
    """Records stalls longer than ``threshold`` seconds while :meth:`watch` is active (one phase at a time)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.stalls: list[Stall] = []
        self._last = 0.0
        self._sample: tuple[str, str] | None = None
        self._thread_id = 0
        self._native_id = 0
        self._waited = 0.0  # runqueue seconds of the loop thread at the last tick
        self._on_cpu = 0.0  # CPU seconds of the loop thread at the last tick
        self._gc_started = 0.0
        self._gc_seconds = (
            0.0  # time the collector ran since the last tick: a GC pause is not the env's doing
        )
        # (start, end, method) of each outermost ToolContext sync call made on the loop thread since the last tick
        self._sync_calls: list[tuple[float, float, str, bool]] = []
        self._sync_depth = 0
        #: Thread-blocking calls the author's code made on the loop thread (see :class:`BlockingCall`).
        self.blocking: list[BlockingCall] = []
        self._phase = ""

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self._gc_seconds += time.perf_counter() - self._gc_started
            self._gc_started = 0.0

    def _maybe_sample(self) -> None:
        """Called by the sampler thread: while a stall is in progress, note where the loop thread is."""
        if self._sample is None and time.perf_counter() - self._last > self.threshold:
            from hermes_envs.conformance._sites import current_frames

            frame = current_frames().get(self._thread_id)
            self._sample = _describe(frame)

    async def _ticker(self, phase: str) -> None:
        self._last = time.perf_counter()
        while True:
            await asyncio.sleep(_TICK)
            now = time.perf_counter()
            self._record(phase, now)
            self._last = now

    def _record(self, phase: str, now: float) -> None:
        start = self._last
        gap = now - start - _TICK
        gap, self._gc_seconds = gap - self._gc_seconds, 0.0
        stat = _schedstat(self._native_id)
        cpu: float | None = None
        if stat is not None:
            on_cpu, waited = stat
            gap, self._waited = gap - max(0.0, waited - self._waited), waited
            cpu, self._on_cpu = max(0.0, on_cpu - self._on_cpu), on_cpu
        calls, self._sync_calls = self._sync_calls, []

        def overlap(begin: float, end: float) -> float:
            return max(0.0, min(end, now) - max(begin, start))

        # ToolContext calls the kit's own helpers make (the base's score_rollout cleaning a sandbox up) are the
        # kit's doing, not the env's: subtracted like a GC pause, never blamed on the hook that called the helper.
        gap -= sum(overlap(b, e) for b, e, name, by_kit in calls if by_kit)
        if gap > self.threshold:
            where, inner = self._sample or ("", "")
            if where:  # a stall with no author frame on the stack is not the env's doing
                own = [(b, e, name) for b, e, name, by_kit in calls if not by_kit]
                in_sync = sum(overlap(b, e) for b, e, _ in own)
                names = tuple(dict.fromkeys(name for begin, end, name in own if end > start))
                self.stalls.append(Stall(phase, gap, where, inner, min(in_sync, gap), names, cpu))
        self._sample = None

    def _timed(self, name: str, method: Any) -> Any:
        """``method`` (a ToolContext sync method) that records its time when called on the watched loop thread."""

        @functools.wraps(method)
        def timed(ctx: Any, *args: Any, **kwargs: Any) -> Any:
            if self._sync_depth or threading.get_ident() != self._thread_id:
                return method(ctx, *args, **kwargs)  # nested, or in a worker thread: does not block the loop
            by_kit = is_library_file(_caller_file(sys._getframe(1)))
            self._sync_depth += 1
            begin = time.perf_counter()
            try:
                return method(ctx, *args, **kwargs)
            finally:
                self._sync_depth -= 1
                self._sync_calls.append((begin, time.perf_counter(), name, by_kit))

        return timed

    @contextlib.contextmanager
    def _timing_tool_context(self) -> Any:
        from hermes_envs.tools.context import ToolContext

        originals = {name: vars(ToolContext)[name] for name in SYNC_TOOL_METHODS if name in vars(ToolContext)}
        for name, method in originals.items():
            setattr(ToolContext, name, self._timed(name, method))
        try:
            yield
        finally:
            for name, method in originals.items():
                setattr(ToolContext, name, method)

    async def watch(self, phase: str, coro: Awaitable[T]) -> T:
        """Await ``coro`` while measuring the loop's stalls."""
        # First, before the clock starts: finding the author's modules is the kit's own work, not a stall.
        _wrap_sleep()
        self._thread_id = threading.get_ident()
        self._native_id = threading.get_native_id()
        stat = _schedstat(self._native_id)
        self._on_cpu, self._waited = stat or (0.0, 0.0)
        self._last = time.perf_counter()
        self._gc_seconds = 0.0
        gc.callbacks.append(self._on_gc)
        self._sample = None
        self._sync_calls, self._sync_depth = [], 0
        ticker = asyncio.ensure_future(self._ticker(phase))
        _SAMPLER.add(self)
        global _HOOKED
        if not _HOOKED:
            sys.addaudithook(_audit)
            _HOOKED = True
        self._phase = phase
        _AUDITED.add(self)
        try:
            with self._timing_tool_context():
                return await coro
        finally:
            # A stall right before the end is seen here: the ticker would be cancelled before it could run.
            self._record(phase, time.perf_counter())
            _AUDITED.discard(self)
            if not _AUDITED:
                _unwrap_sleep()
            ticker.cancel()
            gc.callbacks.remove(self._on_gc)
            _SAMPLER.remove(self)
            try:
                await ticker
            except (asyncio.CancelledError, Exception):
                pass
