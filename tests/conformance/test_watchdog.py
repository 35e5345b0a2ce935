"""The event-loop watchdog (HC408): stalls, whose code held the loop, and how much of a stall was spent inside
ToolContext's synchronous methods (the contract's API, reported as a warning) rather than other blocking."""

from __future__ import annotations

import asyncio
import time

import pytest

from hermes_envs.conformance._watchdog import LoopWatchdog
from hermes_envs.tools import ToolContext, cleanup_all_sandboxes


@pytest.fixture
def ctx():
    context = ToolContext("watchdog-test")
    yield context
    context.cleanup()
    cleanup_all_sandboxes()


def watch(coro_fn) -> LoopWatchdog:
    dog = LoopWatchdog(threshold=0.2)
    asyncio.run(dog.watch("rewards", coro_fn()))
    return dog


def test_a_stall_inside_the_sync_tool_context_is_attributed_to_it(ctx):
    async def reward():
        ctx.terminal("sleep 0.4")

    (stall,) = watch(reward).stalls
    assert stall.seconds > 0.3 and stall.sync_tool_calls == ("terminal",)
    assert stall.seconds - stall.sync_tool_seconds < 0.1
    assert "reward" in stall.where


def test_other_blocking_is_not_attributed_to_the_tool_context(ctx):
    async def reward():
        ctx.write_file("a.txt", "x")  # a fast sync call in the same stall does not excuse the sleep
        time.sleep(0.4)

    (stall,) = watch(reward).stalls
    assert stall.seconds > 0.3 and stall.sync_tool_calls == ("write_file",)
    assert stall.seconds - stall.sync_tool_seconds > 0.3


def test_the_awaitable_twins_do_not_stall_and_the_methods_are_restored(ctx):
    original = ToolContext.__dict__["terminal"]

    async def reward():
        assert ToolContext.__dict__["terminal"] is not original  # timed while watched
        await ctx.aterminal("sleep 0.4")

    assert watch(reward).stalls == []
    assert ToolContext.__dict__["terminal"] is original


def test_a_loop_idle_in_select_is_not_blamed_on_the_code_that_started_it() -> None:
    """On a loaded machine the OS may not schedule the process while its loop waits in select(): that gap is
    nobody's doing. Before, the sampler walked past the loop's frames to the caller of asyncio.run (here this
    test function) and HC408 blamed it."""
    import sys
    import threading

    from hermes_envs.conformance._watchdog import _describe

    started, release = threading.Event(), threading.Event()

    async def idle() -> None:
        started.set()
        while not release.is_set():
            await asyncio.sleep(0.05)

    def run_loop_from_author_code() -> None:
        asyncio.run(idle())

    thread = threading.Thread(target=run_loop_from_author_code)
    thread.start()
    try:
        assert started.wait(10)
        for _ in range(200):  # catch the loop thread while it waits in select(), not while it runs idle()
            frame = sys._current_frames()[thread.ident]
            if frame.f_code.co_name == "select":
                break
        else:
            pytest.skip("never caught the loop thread inside select()")
        author, _inner = _describe(frame)
        assert author == ""
    finally:
        release.set()
        thread.join()


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="needs Linux CPU affinity")
@pytest.mark.parametrize("sampler_started_before", [False, True], ids=["first-watch", "later-watch"])
def test_time_the_os_gave_to_other_processes_is_not_a_stall(sampler_started_before: bool) -> None:
    """On a loaded CI machine a reward that computes for 0.15 s can take 0.3 s of wall time because another
    process shared its CPU. That wait is the machine's: the runqueue time of the loop thread is subtracted.
    Before, HC408 reported such stalls as errors on correct envs (flaky corpus and snapshot tests). The sampler
    thread is shared by every watch of the process: one started before the loop was pinned follows it there."""
    import os
    import subprocess
    import sys

    from hermes_envs.conformance._watchdog import _runqueue_seconds

    if _runqueue_seconds(__import__("threading").get_native_id()) is None:
        pytest.skip("no /proc schedstat")
    if sampler_started_before:

        async def nothing() -> None:
            pass

        asyncio.run(LoopWatchdog(threshold=0.25).watch("setup", nothing()))
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    hog = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import os,time; os.sched_setaffinity(0, {{{cpu}}}); t=time.time()+20\nwhile time.time()<t: pass",
        ]
    )
    os.sched_setaffinity(0, {cpu})
    try:
        time.sleep(0.2)  # the hog is running on our CPU

        async def reward() -> None:
            spent = time.thread_time()
            while time.thread_time() - spent < 0.15:  # 0.15 s of our own CPU, under the threshold
                pass

        dog = LoopWatchdog(threshold=0.25)
        asyncio.run(dog.watch("rewards", reward()))
        assert dog.stalls == []
    finally:
        os.sched_setaffinity(0, before)
        hog.kill()
        hog.wait()


def test_the_sampler_reads_the_loop_threads_frame_with_the_collector_held_off(monkeypatch) -> None:
    """A CI run froze for good: on CPython 3.11 sys._current_frames() holds the thread-list lock while it makes frame
    objects, and a collection those allocations started freed a threading.local, which takes that lock again (a
    deadlock holding the GIL). The sampler must never call it with the collector on."""
    import gc
    import sys

    seen: list[bool] = []

    def frames() -> dict:
        seen.append(gc.isenabled())
        return {}

    monkeypatch.setattr(sys, "_current_frames", frames)
    dog = LoopWatchdog(threshold=0.0)
    dog._maybe_sample()
    assert seen == [False]
    assert gc.isenabled()
