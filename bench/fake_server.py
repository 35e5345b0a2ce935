"""Benchmark the fake model server against the floors set by the openai SDK itself.

Run: .venv/bin/python bench/fake_server.py [--quick]

Prints, from one run:
- openai SDK requests/s through the CLI fake server (``hermes-envs fake-server``, as ``process``/``serve`` runs start
  it: its default offline tokenizer, a policy answering) vs a minimal aiohttp server with a fixed body, each in its
  own process, at concurrency 1 and 32, the two taking turns burst by burst — ratio target >= 0.95 (``--cli`` runs
  only this; ``--instructions`` adds each server's instructions per request, counted by valgrind's callgrind,
  which no load moves: median of 3 interleaved runs, target <= 1.10, beside aiohttp's low-level ``web.Server``
  with the same fixed body for information, the HTTP layer the fake server uses);
- openai 3.x SDK requests/s through FakeOpenAIServer vs a minimal aiohttp handler returning a fixed body
  (both in a daemon thread, loopback HTTP), at concurrency 1 and 32 — ratio target >= 0.9;
- the in-process transport vs httpx2.MockTransport with a fixed handler — ratio target >= 0.9;
- a HermesAgentLoop turn (request + one trivial tool) vs a bare SDK request — ratio target <= 1.3;
- 64 concurrent rollouts x 10 turns vs 1 rollout at a time, time per turn — ratio target <= 1.0 (not slower), with
  the server in its own process (``FakeOpenAIServer(process=True)``, as the CLI serves ``process``/``serve`` runs:
  the target) and, for information, in a daemon thread, beside the same measure for a minimal aiohttp handler in
  a thread: a server thread shares the GIL with the client, whose per-request CPU grows with 64 open connections.

Every ratio is the median of the ratios of short back-to-back pairs (which side goes first alternates): on a shared
machine the load drifts on the scale of a second. The CLI rates interleave finer still, one burst at a time (see
``cli_ratio``). The minimal server stays the idiomatic minimal one (an Application with one catch-all route and a
fixed body the size of ours); the fake server being cheaper at the HTTP layer (no router) is its own doing. The rollout lines also print CPU time per turn, which the load
of other processes hardly moves.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx2
import openai
from aiohttp import web

from hermes_envs.testing.fake_server import FakeOpenAIServer

USER = [{"role": "user", "content": "hi"}]
FIXED = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok", "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()
# The same reply calling ``noop``: a minimal server that keeps a rollout calling tools, as the script does.
FIXED_TOOL_CALL = FIXED.replace(
    b'"content": "ok"',
    b'"content": null, "tool_calls": [{"id": "call_1", "type": "function", '
    b'"function": {"name": "noop", "arguments": "{}"}}]',
)


class MinimalServer:
    """A minimal aiohttp server returning one fixed body (FIXED) for every request, in a daemon thread like ours."""

    def __init__(self, body: bytes = FIXED) -> None:
        self.body = body

    def __enter__(self) -> MinimalServer:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(512)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        ready = threading.Event()

        async def handler(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(body=self.body, content_type="application/json")

        def run() -> None:
            loop = asyncio.new_event_loop()
            self.loop = loop
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", handler)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, sock).start())
            self.stop = asyncio.Event()
            ready.set()
            loop.run_until_complete(self.stop.wait())
            loop.run_until_complete(runner.cleanup())

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(5)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


async def _rate(client: openai.AsyncOpenAI, total: int, concurrency: int) -> float:
    async def worker(n: int) -> None:
        for _ in range(n):
            await client.chat.completions.create(model="fake", messages=USER)

    per = max(1, total // concurrency)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(per) for _ in range(concurrency)))
    return per * concurrency / (time.perf_counter() - t0)


async def _pairs(measure_ours, measure_floor, pairs: int) -> tuple[float, float, float]:
    """Medians of (ours, floor, ours/floor) over ``pairs`` back-to-back pairs, alternating which side goes first.

    Short, interleaved pairs: the machine is shared, and its load drifts on the scale of a second, so one long
    measurement per side (or always the same order) shows the drift more than the difference.
    """
    ours, floor = [], []
    for i in range(pairs):
        if i % 2:
            ours.append(await measure_ours())
            floor.append(await measure_floor())
        else:
            floor.append(await measure_floor())
            ours.append(await measure_ours())
    ratios = [a / b for a, b in zip(ours, floor, strict=True)]
    return statistics.median(ours), statistics.median(floor), statistics.median(ratios)


async def http_ratio(total: int, concurrency: int, pairs: int) -> tuple[float, float, float]:
    """(ours req/s, minimal aiohttp req/s, ratio), each side with its own warm client."""
    with FakeOpenAIServer(policy="answer:text=ok") as ours, MinimalServer() as floor:
        c_ours = openai.AsyncOpenAI(base_url=ours.base_url, api_key="x")
        c_floor = openai.AsyncOpenAI(base_url=floor.base_url, api_key="x")
        for c in (c_ours, c_floor):  # open the connections
            await _rate(c, concurrency * 2, concurrency)

        async def measure_ours() -> float:
            ours.reset()  # keep the call records small
            return await _rate(c_ours, total, concurrency)

        out = await _pairs(measure_ours, lambda: _rate(c_floor, total, concurrency), pairs)
        await c_ours.close()
        await c_floor.close()
    return out


async def _fixed_handler(request: web.BaseRequest) -> web.Response:
    await request.read()
    return web.Response(body=FIXED, content_type="application/json")


def _serve_minimal() -> int:
    """``--serve-minimal``: the minimal aiohttp server in this process, printing its base URL (for cli_ratio)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", _fixed_handler)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    web.run_app(app, sock=sock, access_log=None, print=None, handle_signals=True)
    return 0


def _serve_lowlevel() -> int:
    """``--serve-lowlevel``: the same handler on aiohttp's low-level ``web.Server`` (no Application, no router),
    the HTTP layer the fake server itself uses: the floor of any aiohttp server (for information)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)

    async def serve() -> None:
        runner = web.ServerRunner(web.Server(_fixed_handler, access_log=None))
        await runner.setup()
        await web.SockSite(runner, sock).start()
        print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())
    return 0


def _spawn(argv: list[str]) -> tuple[subprocess.Popen, str]:
    """Start a server process that prints its base URL on its first line; return it and the URL."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"{argv} printed {url!r} instead of its base URL")
    return proc, url


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


async def _burst(client: openai.AsyncOpenAI, concurrency: int) -> float:
    """Seconds for ``concurrency`` requests sent at once (one at a time for 1)."""
    t0 = time.perf_counter()
    if concurrency == 1:
        await client.chat.completions.create(model="fake", messages=USER)
    else:
        await asyncio.gather(
            *(client.chat.completions.create(model="fake", messages=USER) for _ in range(concurrency))
        )
    return time.perf_counter() - t0


async def cli_ratio(total: int, concurrency: int, pairs: int) -> tuple[float, float, float, float, float]:
    """(CLI fake server req/s, minimal aiohttp req/s, ratio, CPU ms per request of each server process).

    Each server in its own process, each side with its own warm client. The two sides take turns request by
    request (one burst of ``concurrency`` requests each, which side goes first alternating), and each side's
    time is the sum of its own bursts: the load of other processes on a shared machine moves on the scale of
    milliseconds to seconds, so blocks of a hundred requests per side (as this bench measured before) compared
    the load of two moments more than the two servers (their ratios ranged 0.4-1.6 at concurrency 1). The
    client's garbage collector is off during a block (and run between blocks): a full collection of the client
    process (openai, pydantic ...) takes tens of milliseconds and lands in one side's burst. A ratio
    is taken per block of ``total`` requests per side; the figures are the medians over ``pairs`` blocks. The
    CPU figures (each server process's CPU over the blocks) hardly move with the load of other processes,
    unlike the rates: they show what the CLI server does per request beyond the minimal one.
    """
    ours, ours_url = _spawn(CLI_SERVER)
    floor, floor_url = _spawn(MINIMAL_SERVER)
    rounds = max(1, total // concurrency)
    try:
        c_ours = openai.AsyncOpenAI(base_url=ours_url, api_key="x", max_retries=0)
        c_floor = openai.AsyncOpenAI(base_url=floor_url, api_key="x", max_retries=0)
        for c in (c_ours, c_floor):  # open the connections, warm both servers
            await _rate(c, max(20, concurrency * 2), concurrency)
        rates_ours, rates_floor, ratios = [], [], []
        cpu_ours = cpu_floor = 0.0
        for _ in range(pairs):
            t_ours = t_floor = 0.0
            cpu0 = _proc_cpu(ours.pid), _proc_cpu(floor.pid)
            gc.collect()  # the client's collections, not in the timed bursts: a full one lands on one side only
            gc.disable()
            try:
                for r in range(rounds):
                    if r % 2:
                        t_ours += await _burst(c_ours, concurrency)
                        t_floor += await _burst(c_floor, concurrency)
                    else:
                        t_floor += await _burst(c_floor, concurrency)
                        t_ours += await _burst(c_ours, concurrency)
            finally:
                gc.enable()
            cpu_ours += _proc_cpu(ours.pid) - cpu0[0]
            cpu_floor += _proc_cpu(floor.pid) - cpu0[1]
            n = rounds * concurrency
            rates_ours.append(n / t_ours)
            rates_floor.append(n / t_floor)
            ratios.append(t_floor / t_ours)
        await c_ours.close()
        await c_floor.close()
    finally:
        for proc in (ours, floor):
            proc.terminate()
            proc.wait(10)
    per = [cpu / (pairs * rounds * concurrency) * 1000 for cpu in (cpu_ours, cpu_floor)]
    return (
        statistics.median(rates_ours),
        statistics.median(rates_floor),
        statistics.median(ratios),
        per[0],
        per[1],
    )


CLI_SERVER = [sys.executable, "-m", "hermes_envs.cli", "fake-server", "--policy", "answer:text=ok"]
MINIMAL_SERVER = [sys.executable, str(Path(__file__).resolve()), "--serve-minimal"]
INSTRUCTION_RUNS = 3
LOWLEVEL_SERVER = [sys.executable, str(Path(__file__).resolve()), "--serve-lowlevel"]


async def instructions_per_request(argv: list[str], total: int, concurrency: int) -> float:
    """Instructions the server process ``argv`` executes per request, counted by callgrind (valgrind).

    Only the measured requests are counted: the server starts with counting off (``--instr-atstart=no``), and
    ``callgrind_control`` turns it on after a warm-up and off again after ``total`` requests. Unlike a time, the
    count does not move with the load of other processes.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        proc, url = _spawn(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", *argv]
        )
        try:
            client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0, timeout=600)
            await _rate(client, max(40, concurrency * 2), concurrency)
            control = ["callgrind_control", "--instr"]
            subprocess.run([*control, "on", str(proc.pid)], capture_output=True, check=True)
            await _rate(client, total, concurrency)
            subprocess.run([*control, "off", str(proc.pid)], capture_output=True, check=True)
            await client.close()
        finally:
            proc.terminate()
            proc.wait(120)
        counted = 0
        for name in os.listdir(tmp):
            with open(os.path.join(tmp, name)) as f:
                counted += sum(int(line.split()[1]) for line in f if line.startswith("totals:"))
    return counted / (max(1, total // concurrency) * concurrency)


async def main_cli(pairs: int, instructions: bool = False) -> bool:
    ok = True
    for conc, total in ((1, 100), (32, 960)):  # 32: 30 bursts per block, a burst's time varies more
        ours, floor, ratio, cpu_ours, cpu_floor = await cli_ratio(total, conc, pairs)
        ok &= ratio >= 0.95
        print(
            f"CLI fake server, concurrency {conc:>2} (own process): ours {ours:7.0f} req/s, minimal aiohttp "
            f"{floor:7.0f} req/s, ratio {ratio:.2f} (target >= 0.95); server CPU per request: ours "
            f"{cpu_ours:.3f} ms, minimal {cpu_floor:.3f} ms (load average {_loadavg()})",
            flush=True,
        )
    if instructions:
        if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
            print("instructions per request: valgrind (callgrind) is not installed", flush=True)
            return ok
        for conc, total in ((1, 320), (32, 320)):
            counts: dict[str, list[float]] = {"ours": [], "minimal": [], "low-level": []}
            for _ in range(INSTRUCTION_RUNS):  # interleaved: a count moves by about 1% from run to run
                for name, argv in (
                    ("ours", CLI_SERVER),
                    ("minimal", MINIMAL_SERVER),
                    ("low-level", LOWLEVEL_SERVER),
                ):
                    counts[name].append(await instructions_per_request(argv, total, conc))
            i_ours, i_floor, i_low = (statistics.median(counts[k]) for k in ("ours", "minimal", "low-level"))
            print(
                f"CLI fake server, concurrency {conc:>2}: server instructions per request (callgrind, median of "
                f"{INSTRUCTION_RUNS} runs): ours {i_ours / 1000:.0f}k, minimal aiohttp {i_floor / 1000:.0f}k, "
                f"ratio {i_ours / i_floor:.2f} (target <= 1.10); ours above the minimal: "
                f"{(i_ours - i_floor) / 1000:.0f}k; aiohttp's low-level web.Server with the same fixed body "
                f"(information: the HTTP layer ours uses) {i_low / 1000:.0f}k, ours / it {i_ours / i_low:.2f}",
                flush=True,
            )
    return ok


async def in_process_ratio(total: int, pairs: int) -> tuple[float, float, float]:
    """(ours req/s, httpx2.MockTransport req/s, ratio), one request at a time."""
    ours = FakeOpenAIServer(policy="answer:text=ok")

    def fixed(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=FIXED, headers={"content-type": "application/json"})

    c_ours = ours.async_client(in_process=True)
    c_floor = openai.AsyncOpenAI(
        base_url="http://x/v1",
        api_key="x",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fixed)),
    )
    for c in (c_ours, c_floor):
        await _rate(c, 20, 1)

    async def measure_ours() -> float:
        ours.reset()
        return await _rate(c_ours, total, 1)

    out = await _pairs(measure_ours, lambda: _rate(c_floor, total, 1), pairs)
    await c_ours.close()
    await c_floor.close()
    return out


TURNS = 10
NOOP = {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}}


def rollout_script(turns: int = TURNS) -> list[dict]:
    return [{"tool_calls": [{"name": "noop", "arguments": {}}]}] * (turns - 1) + [{"content": "done"}]


async def _rollout(client: openai.AsyncOpenAI, i: int, turns: int = TURNS) -> None:
    """One conversation: the history grows by an assistant message and a tool result per turn."""
    messages = [{"role": "user", "content": f"item {i}"}]
    for _ in range(turns):
        r = await client.chat.completions.create(model="fake", messages=messages, tools=[NOOP])
        m = r.choices[0].message
        messages.append(m.model_dump(exclude_none=True))
        for tc in m.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": "ok"})


def _cpu_seconds(server_pid: int | None) -> float:
    """CPU time of this process (client, and the server thread if any) plus the server process's, if given."""
    cpu = time.process_time()
    if server_pid is not None:
        try:
            with open(f"/proc/{server_pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:  # not Linux: the CPU figure then leaves the server out
            pass
    return cpu


async def _per_turn(
    client: openai.AsyncOpenAI, rollouts: int, concurrent: bool, server_pid: int | None = None
) -> tuple[float, float]:
    """(wall seconds, CPU seconds) per turn."""
    t0, c0 = time.perf_counter(), _cpu_seconds(server_pid)
    if concurrent:
        await asyncio.gather(*(_rollout(client, i) for i in range(rollouts)))
    else:
        for i in range(rollouts):
            await _rollout(client, i)
    turns = rollouts * TURNS
    return (time.perf_counter() - t0) / turns, (_cpu_seconds(server_pid) - c0) / turns


async def rollouts_ratio(
    base_url: str, n: int, sequential: int, rounds: int, server_pid: int | None = None
) -> dict[str, float]:
    """Per turn: 1 rollout at a time vs ``n`` concurrent rollouts (x 10 turns), interleaved, medians of rounds.

    Each side has its own client, warmed to its steady state (1 vs ``n`` open keep-alive connections): a trainer
    keeps its client for the whole run, so the ``n`` TCP connects of the first group are not part of the per-turn
    cost. They are measured separately (``cold``: a fresh client's first group, vs the same 1-rollout baseline).
    The single-rollout side runs ``sequential`` rollouts one after another so that it is timed over more than a
    few milliseconds. ``cpu_*`` is CPU time per turn (client + server): unlike wall time it hardly moves with the
    load other processes put on a shared machine, so it shows whether concurrency costs any extra work.
    """
    one_c = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    many_c = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    await _per_turn(one_c, 2, concurrent=False)
    await _per_turn(many_c, n, concurrent=True)
    rows: dict[str, list[float]] = {
        k: [] for k in ("one", "many", "ratio", "cold", "cpu_one", "cpu_many", "cpu_ratio")
    }
    for i in range(rounds):
        if i % 2:  # alternate which side goes first
            many, cpu_many = await _per_turn(many_c, n, concurrent=True, server_pid=server_pid)
            one, cpu_one = await _per_turn(one_c, sequential, concurrent=False, server_pid=server_pid)
        else:
            one, cpu_one = await _per_turn(one_c, sequential, concurrent=False, server_pid=server_pid)
            many, cpu_many = await _per_turn(many_c, n, concurrent=True, server_pid=server_pid)
        fresh = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
        await _rollout(fresh, -1)  # one connection open, like a client that has served one rollout
        cold, _ = await _per_turn(fresh, n, concurrent=True)
        await fresh.close()
        for k, v in (
            ("one", one),
            ("many", many),
            ("ratio", many / one),
            ("cold", cold / one),
            ("cpu_one", cpu_one),
            ("cpu_many", cpu_many),
            ("cpu_ratio", cpu_many / cpu_one),
        ):
            rows[k].append(v)
    await one_c.close()
    await many_c.close()
    return {k: statistics.median(v) for k, v in rows.items()}


# ------------------------------------------------------------------------------------------ agent loop turn
class _SdkServer:
    """The ``chat_completion(**kwargs)`` interface HermesAgentLoop expects, over a bare openai client."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self.client = client

    async def chat_completion(self, **kwargs: object) -> object:
        return await self.client.chat.completions.create(model="fake", **kwargs)


async def agent_loop_ratio(total: int, pairs: int) -> tuple[float, float, float]:
    """Seconds per HermesAgentLoop turn (one request + one trivial sync tool) vs per bare SDK request.

    Both send the same request (the item's first turn, which calls ``noop``) to the same server over HTTP.
    """
    from hermes_envs.agent import HermesAgentLoop
    from hermes_envs.tools import ToolRegistry

    reg = ToolRegistry()

    @reg.tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    schemas, names = reg.resolve()
    with FakeOpenAIServer([{"tool_calls": [{"name": "noop", "arguments": {}}]}]) as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        server = _SdkServer(client)

        async def loop_turns() -> float:
            t0 = time.perf_counter()
            for _ in range(total):
                result = await HermesAgentLoop(server, schemas, names, max_turns=1, registry=reg).run(
                    [{"role": "user", "content": "hi"}]
                )
                assert result.turns_used == 1 and not result.tool_errors, result
            return (time.perf_counter() - t0) / total

        async def bare_requests() -> float:
            t0 = time.perf_counter()
            for _ in range(total):
                await server.chat_completion(
                    messages=[{"role": "user", "content": "hi"}], n=1, temperature=1.0, tools=schemas
                )
            return (time.perf_counter() - t0) / total

        await loop_turns()
        await bare_requests()
        out = await _pairs(loop_turns, bare_requests, pairs)
        srv.assert_no_failures()
        await client.close()
    return out


def _print_rollouts(where: str, n: int, r: dict[str, float]) -> None:
    print(
        f"rollouts x {TURNS} turns, {where}:\n"
        f"    wall: 1 rollout {r['one'] * 1000:.2f} ms/turn, {n} concurrent {r['many'] * 1000:.2f} ms/turn, "
        f"ratio {r['ratio']:.2f}; first group of a fresh client ({n} connects): {r['cold']:.2f}\n"
        f"    CPU (client + server): 1 rollout {r['cpu_one'] * 1000:.2f} ms/turn, {n} concurrent "
        f"{r['cpu_many'] * 1000:.2f} ms/turn, ratio {r['cpu_ratio']:.2f}"
    )


async def main(quick: bool, cli_only: bool = False, instructions: bool = False) -> int:
    pairs, rounds = (5, 2) if quick else (15, 5)
    print(f"python {sys.version.split()[0]}, openai {openai.__version__}, load average {_loadavg()}")
    ok = await main_cli(pairs, instructions)
    if cli_only:
        return 0
    for conc, total in ((1, 60), (32, 192)):
        ours, floor, ratio = await http_ratio(total, conc, pairs)
        ok &= ratio >= 0.9
        print(
            f"HTTP, concurrency {conc:>2}: ours {ours:7.0f} req/s, minimal aiohttp {floor:7.0f} req/s, "
            f"ratio {ratio:.2f} (target >= 0.9)"
        )
    ours, floor, ratio = await in_process_ratio(100, pairs)
    ok &= ratio >= 0.9
    print(
        f"in-process:            ours {ours:7.0f} req/s, httpx2.MockTransport {floor:7.0f} req/s, "
        f"ratio {ratio:.2f} (target >= 0.9)"
    )
    loop_t, bare_t, ratio = await agent_loop_ratio(40, pairs)
    ok &= ratio <= 1.3
    print(
        f"agent loop turn:       HermesAgentLoop {loop_t * 1000:.2f} ms/turn (request + 1 tool), bare SDK request "
        f"{bare_t * 1000:.2f} ms, ratio {ratio:.2f} (target <= 1.3)"
    )
    n, sequential = 64, 8 if quick else 16
    with FakeOpenAIServer(rollout_script(), process=True) as srv:
        r = await rollouts_ratio(srv.base_url, n, sequential, rounds, server_pid=srv.pid)
        srv.assert_no_failures()
    ok &= r["ratio"] <= 1.0
    _print_rollouts("server in its own process, process=True (target <= 1.0)", n, r)
    with FakeOpenAIServer(rollout_script()) as srv:
        r = await rollouts_ratio(srv.base_url, n, sequential, rounds)
        srv.assert_no_failures()
    _print_rollouts("server in a thread (information: shares the GIL with the client)", n, r)
    with MinimalServer(FIXED_TOOL_CALL) as floor:
        r = await rollouts_ratio(floor.base_url, n, sequential, rounds)
    _print_rollouts("minimal aiohttp handler in a thread (information: the thread's floor)", n, r)
    print("all targets met" if ok else "some targets missed")
    return 0


def _loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer requests (for a smoke run)")
    ap.add_argument("--cli", action="store_true", help="only the CLI fake server vs a minimal aiohttp server")
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="also count each CLI-test server's instructions per request under valgrind's callgrind (slow)",
    )
    ap.add_argument("--serve-minimal", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--serve-lowlevel", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_minimal:
        sys.exit(_serve_minimal())
    if args.serve_lowlevel:
        sys.exit(_serve_lowlevel())
    sys.exit(asyncio.run(main(args.quick, args.cli, args.instructions)))
