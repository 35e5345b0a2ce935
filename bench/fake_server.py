"""Benchmark the fake model server against the floors set by the openai SDK itself.

Run: .venv/bin/python bench/fake_server.py [--quick]

Prints, from one run:
- openai 3.x SDK requests/s through FakeOpenAIServer vs a minimal aiohttp handler returning a fixed body
  (both in a daemon thread, loopback HTTP), at concurrency 1 and 32 — ratio target >= 0.9;
- the in-process transport vs httpx2.MockTransport with a fixed handler — ratio target >= 0.9;
- 64 concurrent rollouts x 10 turns vs 1 rollout x 10 turns, time per turn — ratio target <= 1.0 (not slower).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import threading
import time

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


class MinimalServer:
    """A minimal aiohttp server returning FIXED for every request, in a daemon thread like ours."""

    def __enter__(self) -> MinimalServer:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(512)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        ready = threading.Event()

        async def handler(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(body=FIXED, content_type="application/json")

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

    for _ in range(10):  # warm up connections
        await client.chat.completions.create(model="fake", messages=USER)
    per = total // concurrency
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(per) for _ in range(concurrency)))
    return per * concurrency / (time.perf_counter() - t0)


async def _best(make, total: int, concurrency: int, rounds: int) -> float:
    rates = []
    for _ in range(rounds):
        client = make()
        rates.append(await _rate(client, total, concurrency))
        await client.close()
    return max(rates)


async def http_ratio(total: int, concurrency: int, rounds: int) -> tuple[float, float]:
    with FakeOpenAIServer(policy="answer:text=ok") as ours, MinimalServer() as floor:
        # alternate to share any machine noise fairly
        r_ours, r_floor = [], []
        for _ in range(rounds):
            r_floor.append(
                await _best(
                    lambda: openai.AsyncOpenAI(base_url=floor.base_url, api_key="x"), total, concurrency, 1
                )
            )
            r_ours.append(
                await _best(
                    lambda: openai.AsyncOpenAI(base_url=ours.base_url, api_key="x"), total, concurrency, 1
                )
            )
            ours.reset()
    return max(r_ours), max(r_floor)


async def in_process_ratio(total: int, rounds: int) -> tuple[float, float]:
    ours = FakeOpenAIServer(policy="answer:text=ok")

    def fixed(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=FIXED, headers={"content-type": "application/json"})

    def make_ours() -> openai.AsyncOpenAI:
        return ours.async_client(in_process=True)

    def make_floor() -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url="http://x/v1",
            api_key="x",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fixed)),
        )

    r_ours, r_floor = [], []
    for _ in range(rounds):
        r_floor.append(await _best(make_floor, total, 1, 1))
        r_ours.append(await _best(make_ours, total, 1, 1))
        ours.reset()
    return max(r_ours), max(r_floor)


async def rollouts_per_turn(n_rollouts: int, turns: int) -> float:
    """Seconds per turn when n_rollouts conversations of `turns` turns run concurrently."""
    script = [{"tool_calls": [{"name": "noop", "arguments": {}}]}] * (turns - 1) + [{"content": "done"}]
    tools = [{"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}}]
    with FakeOpenAIServer(script) as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="x", max_retries=0)

        async def rollout(i: int) -> None:
            messages = [{"role": "user", "content": f"item {i}"}]
            for _ in range(turns):
                r = await client.chat.completions.create(model="fake", messages=messages, tools=tools)
                m = r.choices[0].message
                messages.append(m.model_dump(exclude_none=True))
                for tc in m.tool_calls or []:
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": "ok"})

        await rollout(-1)
        t0 = time.perf_counter()
        await asyncio.gather(*(rollout(i) for i in range(n_rollouts)))
        elapsed = time.perf_counter() - t0
        srv.assert_no_failures()
        await client.close()
    return elapsed / (n_rollouts * turns)


async def main(quick: bool) -> int:
    total1, total32, rounds = (150, 320, 2) if quick else (400, 960, 3)
    ok = True
    print(f"python {sys.version.split()[0]}, openai {openai.__version__}")
    for conc, total in ((1, total1), (32, total32)):
        ours, floor = await http_ratio(total, conc, rounds)
        ratio = ours / floor
        ok &= ratio >= 0.9
        print(
            f"HTTP, concurrency {conc:>2}: ours {ours:7.0f} req/s, minimal aiohttp {floor:7.0f} req/s, "
            f"ratio {ratio:.2f} (target >= 0.9)"
        )
    ours, floor = await in_process_ratio(total1 * 2, rounds)
    ratio = ours / floor
    ok &= ratio >= 0.9
    print(
        f"in-process:            ours {ours:7.0f} req/s, httpx2.MockTransport {floor:7.0f} req/s, "
        f"ratio {ratio:.2f} (target >= 0.9)"
    )
    one = await rollouts_per_turn(1, 10)
    many = await rollouts_per_turn(64, 10)
    ok &= many <= one
    print(
        f"rollouts x 10 turns:   1 rollout {one * 1000:.2f} ms/turn, 64 concurrent {many * 1000:.2f} ms/turn, "
        f"ratio {many / one:.2f} (target <= 1.0)"
    )
    print("all targets met" if ok else "some targets missed")
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer requests (for a smoke run)")
    sys.exit(asyncio.run(main(ap.parse_args().quick)))
