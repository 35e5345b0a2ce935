"""A stand-in for a real OpenAI-compatible provider, run in its own process on 127.0.0.1.

``python tests/recording/provider.py --key KEY [--port P]`` prints its base URL, then serves until SIGTERM. It
behaves like a hosted API in the ways that matter to cassettes: it refuses requests without ``Authorization: Bearer
KEY`` (401), sends ``openai-organization`` / ``openai-project`` / ``set-cookie`` headers carrying the key, echoes
the key inside JSON bodies (``system_fingerprint``), and streams SSE one event per write. The model behind it is
the demo's arithmetic policy (it computes with the terminal tool, then answers).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys


async def serve(key: str, port: int, answer_offset: int) -> None:
    from aiohttp import web

    from hermes_envs.demo import arithmetic_policy
    from hermes_envs.testing.fake_server._app import FakeModel

    def policy(body):
        turn = arithmetic_policy(body)
        if answer_offset and "Answer:" in (turn.get("content") or ""):
            head, _, num = turn["content"].rpartition("Answer: ")
            turn = {"content": f"{head}Answer: {int(num) + answer_offset}"}
        return turn

    model = FakeModel(policy=policy, strict=True, model="provider-model")
    secret_headers = {
        "openai-organization": f"org-{key}",
        "openai-project": f"proj_{key}",
        "set-cookie": f"session={key}; Path=/; HttpOnly",
        "x-request-id": "req_123",
    }

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {key}":
            return web.json_response({"error": {"message": "invalid api key", "type": "auth"}}, status=401)
        raw = await request.read() if request.can_read_body else b""
        reply = model.handle(request.method, request.path, raw)
        headers = {"Content-Type": reply.content_type, **reply.headers, **secret_headers}
        if reply.sse is not None:
            resp = web.StreamResponse(status=reply.status, headers=headers)
            await resp.prepare(request)
            for chunk in reply.sse:
                await resp.write(chunk)
            await resp.write_eof()
            return resp
        body = reply.body
        if reply.status == 200 and reply.content_type.startswith("application/json"):
            data = json.loads(body)
            if isinstance(data, dict):
                data["system_fingerprint"] = f"fp_{key}"
                body = json.dumps(data).encode()
        return web.Response(status=reply.status, body=body, headers=headers)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    bound = runner.addresses[0][1]
    print(f"http://127.0.0.1:{bound}/v1", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--answer-offset", type=int, default=0, help="answer wrong by this much (drift tests)"
    )
    args = parser.parse_args()
    asyncio.run(serve(args.key, args.port, args.answer_offset))
    return 0


if __name__ == "__main__":
    sys.exit(main())
