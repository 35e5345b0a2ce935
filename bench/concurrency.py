"""Concurrent rollouts vs upstream: `.venv/bin/python bench/concurrency.py --upstream DIR` (issue 26's 64/256 row).

One rollout is bench/rollout.py's (2 turns, one terminal call ``echo hello`` in a NEW task, then the task's sandbox
cleaned up on the event loop, as an env's ``score_rollout`` does); N of them start at once (N = 1, 16, 64, 256) on
one event loop. Both sides run in their own worker process against ONE ``FakeOpenAIServer(process=True)``, in
interleaved rounds (alternately first), and the figure is the median wall time of a batch, ours / upstream's.

DIR is upstream's rig, rebuilt by hand in a temporary folder and never committed: the hermes-agent wheel's top-level
modules (``model_tools.py``, ``toolsets.py``, ``tools/``...) with ``environments/agent_loop.py`` from upstream's
repository beside them. Without ``--upstream`` only our side runs.

``--baseline DIR`` adds a third side, ours as of another commit: DIR holds that commit's ``hermes_envs`` package
(e.g. ``git archive COMMIT hermes_envs | tar -x -C DIR``), put first on the worker's ``PYTHONPATH``.

Memory: for each N and side, a fresh worker warms up (2 rollouts one at a time), then runs one batch of N while a
thread samples its RSS every millisecond: (peak RSS - RSS before) / N. A second fresh worker runs the batch under
``tracemalloc`` (started after the warm-up): traced peak / N. The sandboxes' shells are other processes (not counted).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = [
    {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo hello"}}]},
    {"content": "done"},
]
SIZES = (1, 16, 64, 256)
_TOOL_RESULT = json.dumps({"output": "hello\n", "exit_code": 0, "error": None})


# ---------------------------------------------------------------- worker side (one process per side)


class _SdkServer:
    """The ``chat_completion(**kwargs)`` interface both agent loops expect, over a bare openai client."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def chat_completion(self, **kwargs: Any) -> Any:
        return await self.client.chat.completions.create(model="fake", **kwargs)


class _Side:
    """One side's rollout: its agent loop, its terminal tool, its cleanup."""

    def __init__(self, side: str, base_url: str, upstream: str | None) -> None:
        import openai

        self.side = side
        if side == "upstream":
            assert upstream
            sys.path.insert(0, upstream)
            from model_tools import get_tool_definitions
            from tools.terminal_tool import cleanup_vm

            from environments.agent_loop import HermesAgentLoop as UpLoop

            self.loop_cls: Any = UpLoop
            self.schemas: Any = get_tool_definitions(enabled_toolsets=["terminal"], quiet_mode=True)
            self.names: Any = {s["function"]["name"] for s in self.schemas}
            self.cleanup: Any = cleanup_vm
        else:
            from hermes_envs.agent import HermesAgentLoop
            from hermes_envs.tools import cleanup_sandbox, registry

            self.loop_cls = HermesAgentLoop
            self.schemas, self.names = registry.resolve(["terminal"])
            self.cleanup = cleanup_sandbox
        # connect timeout 60 s (the SDK's 5 s): 256 new connections at once on a loaded machine, either side
        timeout = openai.Timeout(600, connect=60)
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=timeout)
        self.server = _SdkServer(self.client)

    async def rollout(self, i: int) -> None:
        if self.side == "floor":
            return await self._floor(i)
        task_id = f"bench-{uuid.uuid4().hex[:12]}"
        messages = [{"role": "user", "content": f"item {i}: say hello"}]
        loop = self.loop_cls(self.server, self.schemas, self.names, max_turns=4, task_id=task_id)
        result = await loop.run(messages)
        assert result.turns_used == 2 and not result.tool_errors, result
        assert "hello" in messages[2]["content"], messages
        self.cleanup(task_id)

    async def _floor(self, i: int) -> None:
        """The same two requests with the bare SDK: no loop, no tool, the tool result written by hand."""
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"item {i}: say hello"}]
        create = self.client.chat.completions.create
        r = await create(model="fake", messages=messages, n=1, temperature=1.0, tools=self.schemas)
        tc = r.choices[0].message.tool_calls[0]
        call = {"id": tc.id, "type": "function", "function": {"name": tc.function.name, "arguments": "{}"}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": tc.id, "content": _TOOL_RESULT})
        r = await create(model="fake", messages=messages, n=1, temperature=1.0, tools=self.schemas)
        assert r.choices[0].message.content == "done"

    async def batch(self, n: int) -> float:
        t0 = time.perf_counter()
        await asyncio.gather(*(self.rollout(j) for j in range(n)))
        return time.perf_counter() - t0


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _memory(side: _Side, n: int, traced: bool) -> dict[str, float]:
    for i in range(2):
        await side.rollout(i)
    await asyncio.sleep(0.3)  # let spare shells finish starting
    if traced:
        import tracemalloc

        tracemalloc.start(1)
        base = tracemalloc.get_traced_memory()[0]
        await side.batch(n)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return {"traced": (peak - base) / n}
    before, peak, done = _rss(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.001)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    await side.batch(n)
    done.set()
    t.join()
    return {"rss": (max(peak[0], _rss()) - before) / n}


async def _serve(side: _Side) -> None:
    """Answer the parent's commands, one JSON line each: {"n": N} -> {"wall": seconds}."""
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    for i in range(3):  # warm: imports, connections, the sandbox pool
        await side.rollout(i)
    await side.batch(16)
    print(json.dumps({"ready": True}), flush=True)
    while line := await reader.readline():
        cmd = json.loads(line)
        wall = await side.batch(cmd["n"])
        print(json.dumps({"wall": wall}), flush=True)


def worker(args: argparse.Namespace) -> None:
    side = _Side(args.worker, args.base_url, args.upstream)
    try:
        if args.memory:
            out = asyncio.run(_memory(side, args.memory, args.traced))
            print(json.dumps(out), flush=True)
        else:
            asyncio.run(_serve(side))
    finally:
        if args.worker == "ours":
            from hermes_envs.tools import cleanup_all_sandboxes

            cleanup_all_sandboxes()


# ---------------------------------------------------------------- parent side


_BASELINE: str | None = None  # --baseline DIR (the parent's; its workers get it through PYTHONPATH)


def _env(side: str, upstream: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if side == "baseline" and _BASELINE:
        env["PYTHONPATH"] = os.pathsep.join([_BASELINE, *filter(None, [env.get("PYTHONPATH")])])
    if side == "upstream" and upstream:
        home = Path(upstream).parent / "home"
        home.mkdir(exist_ok=True)
        env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"), TERMINAL_ENV="local")
    return env


def _argv(side: str, base_url: str, upstream: str | None, *extra: str) -> list[str]:
    worker = "ours" if side == "baseline" else side
    argv = [sys.executable, __file__, "--worker", worker, "--base-url", base_url, *extra]
    return argv + (["--upstream", upstream] if upstream else [])


class _Worker:
    def __init__(self, side: str, base_url: str, upstream: str | None) -> None:
        self.proc = subprocess.Popen(
            _argv(side, base_url, upstream),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=_env(side, upstream),
            cwd=upstream if side == "upstream" else str(ROOT),
        )
        assert json.loads(self._line()).get("ready")

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited ({self.proc.wait()})")
        return line

    def batch(self, n: int) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"n": n}) + "\n")
        self.proc.stdin.flush()
        return float(json.loads(self._line())["wall"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _one_shot(side: str, base_url: str, upstream: str | None, n: int, traced: bool) -> dict[str, float]:
    extra = ["--memory", str(n)] + (["--traced"] if traced else [])
    for attempt in range(2):  # a fresh worker's burst of new connections can time out on a loaded machine
        out = subprocess.run(
            _argv(side, base_url, upstream, *extra),
            capture_output=True,
            text=True,
            env=_env(side, upstream),
            cwd=upstream if side == "upstream" else str(ROOT),
        )
        if out.returncode == 0:
            return dict(json.loads(out.stdout.strip().splitlines()[-1]))
        print(
            f"  ({side} N={n} memory run failed, attempt {attempt + 1}: {out.stderr.strip()[-300:]})",
            flush=True,
        )
    raise RuntimeError(f"{side}'s memory run at N={n} failed twice")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", help="upstream rig folder (see above)")
    ap.add_argument("--baseline", help="folder holding another commit's hermes_envs (see above)")
    ap.add_argument("--rounds", type=int, default=8, help="rounds per N (N=1 gets 4x as many, N>=256 half)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-wall", action="store_true")
    ap.add_argument("--floor", action="store_true", help="add the bare-SDK floor (our schemas) as a side")
    ap.add_argument("--worker", choices=("ours", "upstream", "floor"), help=argparse.SUPPRESS)
    ap.add_argument("--base-url", help=argparse.SUPPRESS)
    ap.add_argument("--memory", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    upstream = str(Path(args.upstream).resolve()) if args.upstream else None
    global _BASELINE
    _BASELINE = str(Path(args.baseline).resolve()) if args.baseline else None
    sides = ["ours"] + (["baseline"] if _BASELINE else []) + (["upstream"] if upstream else [])
    sides += ["floor"] if args.floor else []
    sizes = [int(x) for x in args.sizes.split(",")]
    sys.path.insert(0, str(ROOT))
    from hermes_envs.testing.fake_server import FakeOpenAIServer

    with FakeOpenAIServer(SCRIPT, process=True, strict=True) as srv:
        print(f"load before: {_load()}", flush=True)
        if not args.no_wall:
            workers = {s: _Worker(s, srv.base_url, upstream) for s in sides}
            try:
                for n in sizes:
                    walls: dict[str, list[float]] = {s: [] for s in sides}
                    rounds = (
                        args.rounds * 4 if n == 1 else max(3, args.rounds // 2) if n >= 256 else args.rounds
                    )
                    for r in range(rounds):
                        for s in sides if r % 2 == 0 else sides[::-1]:
                            walls[s].append(workers[s].batch(n))
                    med = {s: statistics.median(v) * 1e3 for s, v in walls.items()}
                    row = "  ".join(
                        f"{s} {med[s]:8.1f} ms [{min(walls[s]) * 1e3:.0f}-{max(walls[s]) * 1e3:.0f}]"
                        for s in sides
                    )
                    ratio = "".join(f"  ours/{s} {med['ours'] / med[s]:.2f}x" for s in sides[1:])
                    for s in ("baseline", "floor"):
                        if s in sides and upstream:
                            ratio += f"  {s}/upstream {med[s] / med['upstream']:.2f}x"
                    print(
                        f"N={n:<4} batch wall (median of {len(walls['ours'])}): {row}{ratio}  load {_load()}",
                        flush=True,
                    )
            finally:
                for w in workers.values():
                    w.close()
        if not args.no_memory:
            for n in sizes:
                if n == 1:
                    continue
                cells = []
                for s in sides:
                    rss = _one_shot(s, srv.base_url, upstream, n, traced=False)["rss"]
                    traced = _one_shot(s, srv.base_url, upstream, n, traced=True)["traced"]
                    cells.append(f"{s}: RSS +{rss / 1024:6.1f} KiB, traced peak {traced / 1024:6.1f} KiB")
                print(
                    f"N={n:<4} memory per concurrent rollout  " + "   ".join(cells) + f"  load {_load()}",
                    flush=True,
                )
        srv.assert_no_failures()


if __name__ == "__main__":
    main()
