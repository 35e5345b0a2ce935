"""The aiohttp server answering with a :class:`~.model.FakeModel` over real HTTP (faults included: delays, dropped
connections, bodies cut short).

FakeModel routes every request itself, so the server is aiohttp's low-level ``web.Server``: an ``Application``
would add a router match, match-info objects and the middleware chain to every request (about 30k instructions,
a tenth of an aiohttp request) for a single catch-all route. :func:`make_app` still gives an Application for code
that embeds the fake model in its own aiohttp app.

``FakeModel``, ``Call`` and ``Reply`` are re-exported here for code written when this module held them all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ._model import FakeModel
from ._records import Call
from ._replies import Reply

__all__ = [
    "INLINE_BODY_BYTES",
    "MAX_BODY_BYTES",
    "Call",
    "FakeModel",
    "Reply",
    "make_app",
    "make_handler",
    "make_server",
]

MAX_BODY_BYTES = 64 * 1024 * 1024
"""The largest request body the server reads (a long history with big tool results stays far below)."""

INLINE_BODY_BYTES = 1024 * 1024
"""Bodies up to this size are answered in the event loop; bigger ones in a worker thread (other clients go on)."""

Handler = Callable[[Any], Awaitable[Any]]


def make_handler(model: FakeModel, answer_expect: bool = False) -> Handler:
    """The aiohttp request handler answering every path with ``model`` (routing happens in FakeModel).

    ``answer_expect``: answer ``Expect: 100-continue`` here, as an Application does before its handlers (for the
    low-level server, which does not).
    """
    from aiohttp import web

    handle = model.handle
    Response = web.Response

    async def handler(request: web.BaseRequest) -> web.StreamResponse:
        if answer_expect:
            expect = request.headers.get("Expect")
            if expect:
                await _expect(request, expect)
        raw = await request.read()  # b"" without a body
        if len(raw) <= INLINE_BODY_BYTES:
            reply = handle(request.method, request.path, raw)
        else:  # parsing and counting a big body: in a thread, so the other connections keep being served
            reply = await asyncio.get_running_loop().run_in_executor(
                None, handle, request.method, request.path, raw
            )
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.drop:
            _abort(request)
            raise asyncio.CancelledError  # aiohttp closes the handler quietly; the client sees a disconnect
        if reply.sse is None and not reply.cut:
            if reply.status == 200 and not reply.headers:  # a plain answer: aiohttp's defaults
                return Response(body=reply.body, content_type=reply.content_type)
            return Response(
                status=reply.status, body=reply.body, content_type=reply.content_type, headers=reply.headers
            )
        if reply.sse is not None:
            resp = web.StreamResponse(
                status=reply.status, headers={"Content-Type": reply.content_type, **reply.headers}
            )
            await resp.prepare(request)
            await resp.write(b"".join(reply.sse))
            if reply.cut:
                _abort(request)
                raise asyncio.CancelledError
            await resp.write_eof()
            return resp
        resp = web.StreamResponse(
            status=reply.status,
            headers={"Content-Type": reply.content_type, "Content-Length": str(reply.declared_length)},
        )
        await resp.prepare(request)
        await resp.write(reply.body)
        _abort(request)
        raise asyncio.CancelledError

    return handler


def make_server(model: FakeModel, loop: asyncio.AbstractEventLoop) -> Any:
    """aiohttp's low-level ``web.Server`` serving ``model`` on every path, with no access log.

    It does what an Application's catch-all route did and FakeModel does not: answers ``Expect: 100-continue``
    (curl sends it for bodies over 1 KB) and reads bodies up to :data:`MAX_BODY_BYTES`.
    """
    from aiohttp import web

    def make_request(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> web.BaseRequest:
        return web.BaseRequest(message, payload, protocol, writer, task, loop, client_max_size=MAX_BODY_BYTES)

    handler = make_handler(model, answer_expect=True)
    return web.Server(handler, request_factory=make_request, loop=loop, access_log=None)


async def _expect(request: Any, expect: str) -> None:
    """Answer an ``Expect`` header as an aiohttp Application does: ``100 Continue``, or 417 for another value."""
    from aiohttp import HttpVersion11, web

    if request.version != HttpVersion11:
        return
    if expect.lower() != "100-continue":
        raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
    await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    request.writer.output_size = 0  # the 100 is not part of the response body
    await request.writer.drain()


def make_app(model: FakeModel) -> Any:
    """An aiohttp Application serving ``model`` on every path (for embedding it in another aiohttp app)."""
    from aiohttp import web

    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_route("*", "/{tail:.*}", make_handler(model))
    return app


def _abort(request: Any) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()
