"""Sandbox benchmark: run with `.venv/bin/python bench/sandbox.py` (`... sandbox.py cleanup` for part 4 only). Prints figures and ratios (no pass/fail).

1. One terminal call through our sandbox (the agent loop's path: registry.dispatch -> persistent shell) vs
   `subprocess.run` of the same command (a process per command, as upstream's local backend pays). Target <= 0.25x.
2. 16 concurrent tasks x 50 commands vs 1 task x 50 commands, all through `await Sandbox.arun` on one event loop:
   per-call cost (wall time / calls) must not grow more than 2x.
3. A rollout's sandbox overhead: new task -> first command -> cleanup, with shells started on demand
   (prestart=0) vs handed out pre-started (prestart=2, the default), interleaved; target <= 3 ms with the pool.
4. The reward's ToolContext.terminal (a fresh shell per call) vs a call in the agent's running shell.
5. How long a rollout's sandbox cleanup holds the event loop (an env's ``score_rollout`` calls it there): 1000
   rollouts one after another with prestart=0 (every cleanup removes the last sandbox, so the root folder goes too)
   and 1000 as 4 concurrent streams with the default prestart; p50/p99/max of the cleanup call (wall, and CPU of
   its thread), beside a control of the same CPU length that never waits. Target p99 <= 1 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_envs.tools import (
    cleanup_all_sandboxes,
    cleanup_sandbox,
    configure_sandboxes,
    default_manager,
    get_sandbox,
    registry,
)

COMMAND = "echo hello"
CALLS = 300
CONCURRENT = 16
PER_TASK = 50


def _timed(fn, n: int) -> float:
    samples = []
    for _ in range(3):  # best of three rounds
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n)
    return min(samples)


def single_call() -> None:
    box = get_sandbox("bench-single")
    box.run("true")  # start the shell outside the timing (once per task)
    ours = _timed(lambda: registry.dispatch("terminal", {"command": COMMAND}, "bench-single"), CALLS)
    raw = _timed(lambda: box.run(COMMAND), CALLS)
    spawn = _timed(lambda: subprocess.run(COMMAND, shell=True, capture_output=True, text=True), CALLS)
    print(f"[1] one terminal call of {COMMAND!r} (best of 3 x {CALLS} calls)")
    print(f"    subprocess.run(shell=True)       {spawn * 1e3:8.3f} ms/call")
    print(f"    sandbox.run (persistent shell)   {raw * 1e3:8.3f} ms/call   ratio {raw / spawn:.3f}x")
    print(
        f"    terminal tool via dispatch       {ours * 1e3:8.3f} ms/call   ratio {ours / spawn:.3f}x  (target <= 0.25x)"
    )
    first = time.perf_counter()
    get_sandbox("bench-cold").run(COMMAND)
    print(f"    first call of a new task (starts its shell): {(time.perf_counter() - first) * 1e3:.2f} ms")


async def _task(task_id: str, latencies: list[float]) -> None:
    box = get_sandbox(task_id)
    await box.arun("true")
    for _ in range(PER_TASK):
        start = time.perf_counter()
        await box.arun(COMMAND)
        latencies.append(time.perf_counter() - start)


async def _round(n_tasks: int) -> tuple[float, float]:
    for i in range(n_tasks):  # shells started before timing
        await get_sandbox(f"bench-c{n_tasks}-{i}").arun("true")
    latencies: list[float] = []
    start = time.perf_counter()
    await asyncio.gather(*(_task(f"bench-c{n_tasks}-{i}", latencies) for i in range(n_tasks)))
    wall = time.perf_counter() - start
    return wall / (n_tasks * PER_TASK), statistics.median(latencies)


def concurrency() -> None:
    one_cost, one_lat = min(asyncio.run(_round(1)) for _ in range(3))
    many_cost, many_lat = min(asyncio.run(_round(CONCURRENT)) for _ in range(3))
    print(f"[2] {CONCURRENT} concurrent tasks x {PER_TASK} commands vs 1 task (await arun, one event loop)")
    print(f"    1 task:   per-call cost {one_cost * 1e3:7.3f} ms (median latency {one_lat * 1e3:.3f} ms)")
    print(
        f"    {CONCURRENT} tasks: per-call cost {many_cost * 1e3:7.3f} ms (median latency {many_lat * 1e3:.3f} ms)"
    )
    print(f"    per-call cost growth {many_cost / one_cost:.2f}x  (target <= 2x)")


ROLLOUTS = 40


def _one_rollout(i: int) -> float:
    start = time.perf_counter()
    box = get_sandbox(f"bench-rollout-{i}")
    box.run(COMMAND)
    elapsed = time.perf_counter() - start  # what the rollout waits for; cleanup runs after its reward
    box.cleanup()
    return elapsed


def rollout_overhead() -> None:
    samples: dict[int, list[float]] = {0: [], 2: []}
    for i in range(ROLLOUTS):
        for prestart in (0, 2):  # interleaved, so machine load hits both alike
            configure_sandboxes(prestart=prestart)
            if prestart:
                get_sandbox("bench-warm").run("true")  # triggers the refill
                end = time.monotonic() + 5
                while default_manager.prepared() < prestart and time.monotonic() < end:
                    time.sleep(0.002)
            samples[prestart].append(_one_rollout(i))
            cleanup_all_sandboxes()
    cold, warm = statistics.median(samples[0]), statistics.median(samples[2])
    print(f"[3] new task + first command ({ROLLOUTS} rollouts each, interleaved, medians)")
    print(f"    shell started on demand (prestart=0)  {cold * 1e3:7.3f} ms")
    print(
        f"    pre-started shell (prestart=2)        {warm * 1e3:7.3f} ms   ratio {warm / cold:.3f}x  (target <= 3 ms)"
    )


REWARD_CALLS = 40


def reward_call() -> None:
    """The reward's ToolContext.terminal runs each command in a shell started for it (issue 28: the agent's shell
    state and processes cannot reach it) vs the same command in the agent's (already running) shell."""
    from hermes_envs.tools import ToolContext

    box = get_sandbox("bench-reward")
    box.run("true")
    ctx = ToolContext("bench-reward")
    fresh, agent = [], []
    for _ in range(REWARD_CALLS):  # interleaved, so machine load hits both alike
        start = time.perf_counter()
        ctx.terminal(COMMAND)
        fresh.append(time.perf_counter() - start)
        start = time.perf_counter()
        box.run(COMMAND)
        agent.append(time.perf_counter() - start)
    f, a = statistics.median(fresh), statistics.median(agent)
    print(
        f"[4] the reward's ToolContext.terminal({COMMAND!r}) ({REWARD_CALLS} calls each, interleaved, medians)"
    )
    print(f"    agent's shell (terminal tool)          {a * 1e3:7.3f} ms")
    print(
        f"    fresh shell (ToolContext.terminal)     {f * 1e3:7.3f} ms   ratio {f / a:.1f}x  (upstream: 38 ms)"
    )


CLEANUPS = 1000


def _busy(seconds: float) -> None:
    """CPU work of a given length on this thread (the control: code that never waits)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def _cleanup_stream(prefix: str, n: int, rows: dict[str, list[float]]) -> None:
    for i in range(n):
        task_id = f"{prefix}-{i}"
        await get_sandbox(task_id).arun("echo x > out.txt")  # a file to delete, as a rollout leaves
        wall, cpu = time.perf_counter(), time.thread_time()
        cleanup_sandbox(task_id)  # on the loop, as score_rollout does: the loop waits this long
        rows["wall"].append(time.perf_counter() - wall)
        rows["cpu"].append(time.thread_time() - cpu)
        # the control: as much CPU work, never waiting; its wall time is what the machine's load adds
        wall = time.perf_counter()
        _busy(rows["cpu"][-1])
        rows["control"].append(time.perf_counter() - wall)


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cleanup_blocking() -> None:
    """Wall time is what the loop waits, but on a loaded machine it also counts the time the scheduler gave other
    processes; the CPU time of the cleanup's own thread, and the wall time of a busy loop of the same CPU length
    run right after each cleanup, separate the two."""
    print(f"[5] event-loop time of a rollout's sandbox cleanup ({CLEANUPS} cleanups per row)")
    for label, prestart, streams in (("sequential, prestart=0", 0, 1), ("4 concurrent, prestart=2", 2, 4)):
        configure_sandboxes(prestart=prestart)
        rows: dict[str, list[float]] = {"wall": [], "cpu": [], "control": []}

        async def run(streams: int = streams, rows: dict[str, list[float]] = rows) -> None:
            per = CLEANUPS // streams
            await asyncio.gather(*(_cleanup_stream(f"bench-clean-{s}", per, rows) for s in range(streams)))

        asyncio.run(run())
        cleanup_all_sandboxes()
        print(f"    {label}")
        for what, samples in (
            ("cleanup, wall", rows["wall"]),
            ("cleanup, CPU of its thread", rows["cpu"]),
            ("control (same CPU, no wait), wall", rows["control"]),
        ):
            p50, p99 = _percentile(samples, 0.5) * 1e3, _percentile(samples, 0.99) * 1e3
            print(f"      {what:<36} p50 {p50:7.3f} ms  p99 {p99:8.3f} ms  max {max(samples) * 1e3:8.3f} ms")
        ratio = _percentile(rows["wall"], 0.99) / _percentile(rows["control"], 0.99)
        print(f"      p99 wall ratio cleanup / control {ratio:.2f}  (target: p99 <= 1 ms, ratio ~1)")
    configure_sandboxes()


def main(argv: list[str] | None = None) -> None:
    only = (sys.argv[1:] if argv is None else argv)[:1]
    if only == ["cleanup"]:
        try:
            cleanup_blocking()
        finally:
            cleanup_all_sandboxes()
        return
    try:
        single_call()
        concurrency()
        rollout_overhead()
        reward_call()
        cleanup_blocking()
    finally:
        cleanup_all_sandboxes()


if __name__ == "__main__":
    main()
