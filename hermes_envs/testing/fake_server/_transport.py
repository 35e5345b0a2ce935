"""The in-process transport: answers ``httpx`` / ``httpx2`` requests with a FakeModel directly, no socket and no
thread, with the same routes, records and faults as the HTTP server (a dropped connection, a body cut short)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ._model import FakeModel
from ._replies import Reply

__all__ = ["transport_class"]


_TRANSPORTS: dict[Any, type] = {}


def transport_class(module: Any) -> type:
    """The transport class for ``module`` (``httpx2`` or ``httpx``), built once per module."""
    cls = _TRANSPORTS.get(module)
    if cls is not None:
        return cls

    def _response(reply: Reply, request: Any, stream_error: Any) -> Any:
        headers = {"content-type": reply.content_type, **reply.headers}
        if reply.sse is not None:
            content = b"".join(reply.sse)
        else:
            content = reply.body
        if reply.cut:
            return module.Response(
                reply.status, headers=headers, stream=stream_error(content), request=request
            )
        return module.Response(reply.status, headers=headers, content=content, request=request)

    class _CutStream(module.SyncByteStream, module.AsyncByteStream):
        def __init__(self, data: bytes) -> None:
            self.data = data

        def __iter__(self) -> Any:
            yield self.data
            raise module.RemoteProtocolError("peer closed connection without sending complete message body")

        async def __aiter__(self) -> Any:
            yield self.data
            raise module.RemoteProtocolError("peer closed connection without sending complete message body")

    class InProcessTransport(module.BaseTransport, module.AsyncBaseTransport):
        """Answers requests with the fake model directly, in the caller's thread / event loop."""

        def __init__(self, model: FakeModel) -> None:
            self.model = model

        def handle_request(self, request: Any) -> Any:
            reply = self.model.handle(request.method, request.url.path, request.read())
            if reply.delay:
                time.sleep(reply.delay)
            if reply.drop:
                raise module.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                )
            return _response(reply, request, _CutStream)

        async def handle_async_request(self, request: Any) -> Any:
            reply = self.model.handle(request.method, request.url.path, await request.aread())
            if reply.delay:
                await asyncio.sleep(reply.delay)
            if reply.drop:
                raise module.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                )
            return _response(reply, request, _CutStream)

    _TRANSPORTS[module] = InProcessTransport
    return InProcessTransport
