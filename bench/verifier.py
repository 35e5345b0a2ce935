"""The reward's verification call (ToolContext.terminal, a fresh shell per command; issue 28), per backend, in one run:
`.venv/bin/python bench/verifier.py [local bwrap container]`. Prints medians (p10-p90) and ratios, no pass/fail.

Rows, interleaved round by round so the machine's load hits them alike:
- spare waiting: the call finds a spare shell started ahead (the first verification call of a rollout, or any
  call coming after a command that ran longer than a shell's start);
- right after another: a second call issued at once (its spare is still starting: the call waits for it);
- started at the call: no spare (the path before spares, ``FreshShells.ahead = False``);
- the agent's own shell (the terminal tool) and a plain ``bash -c`` spawn (subprocess.run), for scale.
Upstream's local terminal call measured 38 ms (issue 28).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_envs.tools import ToolContext, cleanup_all_sandboxes, configure_sandboxes, get_sandbox
from hermes_envs.tools.backends._fresh import FreshShells

COMMAND = "echo hello"
ROUNDS = 40


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _wait_ready(fresh: FreshShells) -> None:
    end = time.monotonic() + 30
    while not fresh.ready() and time.monotonic() < end:
        time.sleep(0.001)


def _row(name: str, samples: list[float], base: float | None = None) -> str:
    deciles = statistics.quantiles(samples, n=10)
    med = statistics.median(samples)
    ratio = f"   {med / base:6.3f}x of started-at-call" if base else ""
    return f"    {name:<28} {med * 1e3:7.2f} ms  ({deciles[0] * 1e3:.2f}-{deciles[-1] * 1e3:.2f}){ratio}"


def bench(backend: str) -> None:
    configure_sandboxes(backend=backend)
    FreshShells.wanted = True
    box = get_sandbox("bench-verifier")
    box.run("true")
    fresh = box.backend.fresh
    ctx = ToolContext("bench-verifier")
    rows: dict[str, list[float]] = {k: [] for k in ("spare", "after", "cold", "agent", "bash")}
    for _ in range(ROUNDS):
        fresh.ahead = True
        fresh.ensure_spare()
        _wait_ready(fresh)
        rows["spare"].append(_timed(lambda: ctx.terminal(COMMAND)))
        rows["after"].append(_timed(lambda: ctx.terminal(COMMAND)))
        fresh.ahead = False
        rows["cold"].append(_timed(lambda: ctx.terminal(COMMAND)))
        rows["agent"].append(_timed(lambda: box.run(COMMAND)))
        rows["bash"].append(_timed(lambda: subprocess.run(["bash", "-c", COMMAND], capture_output=True)))
    fresh.ahead = True
    cold = statistics.median(rows["cold"])
    bash = statistics.median(rows["bash"])
    print(f"[{backend}] ToolContext.terminal({COMMAND!r}), {ROUNDS} rounds, median (p10-p90)")
    print(
        _row("spare waiting", rows["spare"], cold)
        + f"   {statistics.median(rows['spare']) / bash:.3f}x bash -c"
    )
    print(_row("right after another", rows["after"], cold))
    print(_row("started at the call (before)", rows["cold"]))
    print(_row("agent's shell", rows["agent"], cold))
    print(_row("bash -c (subprocess.run)", rows["bash"], cold))
    print(f"    served by a spare {fresh.from_spare}, started at the call {fresh.started_cold}")
    cleanup_all_sandboxes()


def main(argv: list[str] | None = None) -> None:
    kinds = (sys.argv[1:] if argv is None else argv) or ["local", "bwrap", "container"]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        for kind in kinds:
            bench(kind)
    finally:
        cleanup_all_sandboxes()
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
