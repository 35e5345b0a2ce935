"""The aiohttp application serving a :class:`~.model.FakeModel` over real HTTP (faults included: delays, dropped
connections, bodies cut short).

``FakeModel``, ``Call`` and ``Reply`` are re-exported here for code written when this module held them all.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .model import FakeModel
from .records import Call
from .replies import Reply

__all__ = ["Call", "FakeModel", "Reply", "make_app"]


# ------------------------------------------------------------------------------------------------- aiohttp
def make_app(model: FakeModel) -> Any:
    """An aiohttp application serving ``model`` on every path (routing happens in FakeModel)."""
    from aiohttp import web

    async def handler(request: web.Request) -> web.StreamResponse:
        raw = await request.read() if request.can_read_body else b""
        reply = model.handle(request.method, request.path, raw)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.drop:
            _abort(request)
            raise asyncio.CancelledError  # aiohttp closes the handler quietly; the client sees a disconnect
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
        if reply.cut:
            resp = web.StreamResponse(
                status=reply.status,
                headers={"Content-Type": reply.content_type, "Content-Length": str(reply.declared_length)},
            )
            await resp.prepare(request)
            await resp.write(reply.body)
            _abort(request)
            raise asyncio.CancelledError
        return web.Response(
            status=reply.status,
            body=reply.body,
            content_type=reply.content_type,
            headers=reply.headers or None,
        )

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", handler)
    return app


def _abort(request: Any) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()
