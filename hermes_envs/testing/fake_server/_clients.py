"""The clients and in-process transport a FakeOpenAIServer hands out (a mixin of the server)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._hosts import Host

__all__ = ["IN_PROCESS_BASE_URL", "ServerClients"]

IN_PROCESS_BASE_URL = "http://fake-openai.invalid/v1"


class ServerClients:
    """``openai`` clients pointed at the server, over HTTP or through an in-process transport (no socket).

    The server provides ``_hosting`` (its Host, which builds the transport or says why it has none) and
    ``base_url``.
    """

    if TYPE_CHECKING:  # (the server's attribute and property)
        _hosting: Host

        @property
        def base_url(self) -> str: ...

    def transport(self, module: Any = None) -> Any:
        """An in-process transport (sync and async) for ``httpx2`` or ``httpx`` clients (default: the one the
        installed openai SDK takes): no socket, no
        thread; the same routes, records and faults as the HTTP server."""
        if module is None:
            from hermes_envs._http_client import sdk_http_module

            module = sdk_http_module()
        return self._hosting.transport(module)

    def async_client(self, *, in_process: bool = False, max_retries: int = 0, **kwargs: Any) -> Any:
        """An ``openai.AsyncOpenAI`` pointed at this server (over HTTP, or in-process with ``in_process=True``)."""
        import openai

        return openai.AsyncOpenAI(**self._client_kwargs(in_process, max_retries, kwargs, sync=False))

    def client(self, *, in_process: bool = False, max_retries: int = 0, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` pointed at this server (over HTTP, or in-process with ``in_process=True``)."""
        import openai

        return openai.OpenAI(**self._client_kwargs(in_process, max_retries, kwargs, sync=True))

    def _client_kwargs(
        self, in_process: bool, max_retries: int, kw: dict[str, Any], sync: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"api_key": "fake-key", "max_retries": max_retries}
        if in_process:
            from hermes_envs._http_client import sdk_http_module

            http = sdk_http_module()  # the client library the installed openai SDK accepts
            cls = http.Client if sync else http.AsyncClient
            out["base_url"] = IN_PROCESS_BASE_URL
            out["http_client"] = cls(transport=self.transport(http), base_url=IN_PROCESS_BASE_URL)
        else:
            out["base_url"] = self.base_url
        out.update(kw)
        return out
