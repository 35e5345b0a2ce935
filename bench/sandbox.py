"""Sandbox benchmark: run with `.venv/bin/python bench/sandbox.py`. Prints figures and ratios (no pass/fail).

1. One terminal call through our sandbox (the agent loop's path: registry.dispatch -> persistent shell) vs
   `subprocess.run` of the same command (a process per command, as upstream's local backend pays). Target <= 0.25x.
2. 16 concurrent tasks x 50 commands vs 1 task x 50 commands, all through `await Sandbox.arun` on one event loop:
   per-call cost (wall time / calls) must not grow more than 2x.
3. A rollout's sandbox overhead: new task -> first command -> cleanup, with shells started on demand
   (prestart=0) vs handed out pre-started (prestart=2, the default), interleaved; target <= 3 ms with the pool.
4. The reward's ToolContext.terminal (a fresh shell per call) vs a call in the agent's running shell.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import time

from hermes_envs.tools import (
    cleanup_all_sandboxes,
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


def main() -> None:
    try:
        single_call()
        concurrency()
        rollout_overhead()
        reward_call()
    finally:
        cleanup_all_sandboxes()


if __name__ == "__main__":
    main()
